"""An eager MLP of large matmuls in nn.Sequential with an SGD optimizer: tens of ops per step, most of the step in
three of them. Usage: big_mlp.py [STEPS]."""

import sys

import torch
import torch.nn as nn


def main(steps):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(256, 1024), torch.randint(0, 10, (256,))
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)  # MARK:model
        loss.backward()
        optimizer.step()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12)
