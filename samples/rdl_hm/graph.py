"""Tables -> a PyG `HeteroData`: one node type per table, one edge type per foreign key and its reverse."""

import torch
from torch_geometric.data import HeteroData

from .database import Database, Table

# RelBench names the edge of a foreign key f2p_<column> and its reverse rev_f2p_<column>.
TO_CUSTOMER = ("transactions", "f2p_customer_id", "customer")
FROM_CUSTOMER = ("customer", "rev_f2p_customer_id", "transactions")
TO_ARTICLE = ("transactions", "f2p_article_id", "article")
FROM_ARTICLE = ("article", "rev_f2p_article_id", "transactions")
EDGE_TYPES = (TO_CUSTOMER, FROM_CUSTOMER, TO_ARTICLE, FROM_ARTICLE)


def _add_table(data: HeteroData, node_type: str, table: Table) -> None:
    data[node_type].x_cat = table.categorical
    data[node_type].x_num = table.numeric
    data[node_type].num_nodes = table.categorical.size(0)


def build_graph(db: Database) -> HeteroData:
    data = HeteroData()
    _add_table(data, "customer", db.customer)
    _add_table(data, "article", db.article)
    _add_table(data, "transactions", db.transactions)
    data["transactions"].time = db.t_dat  # customer and article rows have no time: always visible
    rows = torch.arange(db.t_dat.numel())
    data[TO_CUSTOMER].edge_index = torch.stack([rows, db.customer_id])
    data[FROM_CUSTOMER].edge_index = torch.stack([db.customer_id, rows])
    data[TO_ARTICLE].edge_index = torch.stack([rows, db.article_id])
    data[FROM_ARTICLE].edge_index = torch.stack([db.article_id, rows])
    return data
