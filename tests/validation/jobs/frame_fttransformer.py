"""PyTorch Frame's FT-Transformer (torch_frame.nn.FTTransformer) trained under torch.compile on a synthetic
table with numerical and categorical columns; the last mini-batch of each epoch is smaller than the others."""
import os

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
import torch_frame
from torch_frame.data import DataLoader, Dataset
from torch_frame.nn import FTTransformer

BACKEND = os.environ.get("VALIDATION_BACKEND", "inductor")
ROWS, BATCH = 200, 64


def synthetic_table(rng):
    table = pd.DataFrame({
        "age": rng.normal(40, 12, ROWS),
        "income": rng.lognormal(10, 1, ROWS),
        "city": rng.choice(["berlin", "paris", "rome", "oslo"], ROWS),
        "channel": rng.choice(["web", "store"], ROWS),
    })
    table["churned"] = ((table["age"] < 35) ^ (table["channel"] == "web")).astype(int)
    return table


def main():
    torch.manual_seed(0)
    table = synthetic_table(np.random.default_rng(0))
    dataset = Dataset(table, col_to_stype={"age": torch_frame.numerical, "income": torch_frame.numerical,
                                           "city": torch_frame.categorical, "channel": torch_frame.categorical,
                                           "churned": torch_frame.categorical}, target_col="churned")
    dataset.materialize()
    model = FTTransformer(channels=16, out_channels=2, num_layers=2, col_stats=dataset.col_stats,
                          col_names_dict=dataset.tensor_frame.col_names_dict)
    compiled = torch.compile(model, backend=BACKEND)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(dataset.tensor_frame, batch_size=BATCH, shuffle=True)

    model.train()
    for _ in range(2):
        for frame in loader:
            loss = F.cross_entropy(compiled(frame), frame.y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    print("last loss", round(float(loss), 3))


if __name__ == "__main__":
    main()
