"""An MLP trained eagerly with SGD whose batch is built sample by sample in a Python loop (torch.randn and a
multiplication per sample, then torch.stack): the loop, outside the model, dispatches most of the step's ops.
Usage: collate_mlp.py [STEPS [BATCH]]."""

import sys

import torch
import torch.nn as nn

FEATURES = 32


def make_batch(size, scale):
    samples = []
    for _ in range(size):
        sample = torch.randn(FEATURES)  # MARK:sample
        samples.append(sample * scale * 0.5)  # MARK:collate
    inputs = torch.stack(samples)
    return inputs, inputs[:, :4] * 2.0


def main(steps, batch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scale = torch.ones(FEATURES)
    for _ in range(steps):
        x, y = make_batch(batch, scale)
        loss = nn.functional.mse_loss(model(x), y)  # MARK:model
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30, int(sys.argv[2]) if len(sys.argv) > 2 else 512)
