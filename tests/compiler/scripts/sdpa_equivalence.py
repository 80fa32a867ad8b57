"""Calls every attention method of the sdpa golden input (ORIGINAL) and of its rewrite (REWRITTEN) on the same
weights and inputs and prints the largest difference of each: `name max_abs_diff`, one a line."""

import importlib.util
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(original_path, rewritten_path):
    torch.manual_seed(0)
    original = load(original_path, "original").Attention(32, 4)
    rewritten = load(rewritten_path, "rewritten").Attention(32, 4)
    rewritten.load_state_dict(original.state_dict())
    x = torch.randn(2, 6, 32)
    padding = (torch.rand(2, 1, 1, 6) > 0.3).int()
    padding[..., 0] = 1  # every row keeps a key: a fully masked row is NaN by hand, 0 in SDPA
    calls = {"one_expression": (), "times_scale": (), "with_matmul": (torch.randn(2, 4, 6, 6),),
             "padding_mask": (padding,), "causal": (torch.ones(6, 6, dtype=torch.bool).triu(1),), "unscaled": ()}
    for name, args in calls.items():
        difference = (getattr(original, name)(x, *args) - getattr(rewritten, name)(x, *args)).abs().max().item()
        print(name, difference)


if __name__ == "__main__":
    main(*sys.argv[1:3])
