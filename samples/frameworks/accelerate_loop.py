"""An accelerate training loop that compiles through Accelerator(dynamo_backend="inductor").

Run:  python samples/frameworks/accelerate_loop.py [--steps N]

accelerator.prepare(model) compiles the model; the batches change size every few steps (a shape recompile).
"""

import argparse

import torch
from accelerate import Accelerator
from torch import nn


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="optimizer steps (default: 12)")
    options = parser.parse_args()
    torch.manual_seed(0)
    accelerator = Accelerator(cpu=True, dynamo_backend="inductor")
    model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model, optimizer = accelerator.prepare(model, optimizer)
    for step in range(options.steps):
        rows = 16 + 8 * (step % 3)  # batches of 16, 24 and 32 rows
        features = torch.randn(rows, 16)
        loss = nn.functional.mse_loss(model(features), features.sum(dim=1, keepdim=True))
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    print(f"loss {loss.item():.4f} after {options.steps} steps")


if __name__ == "__main__":
    main()
