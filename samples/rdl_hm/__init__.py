"""Relational deep learning on an H&M-like database: user churn with a heterogeneous GNN.

Run from the repository root: ``python -m samples.rdl_hm.train --help``.
"""
