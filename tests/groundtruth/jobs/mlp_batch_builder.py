"""An MLP trained on batches that a Python function builds row by row, called from one line of the loop.

Lines timed: the call line of the batch builder (its callee holds the time), the builder's row loop and its
tensor conversion, the forward and loss, backward, and the optimizer's step.
"""
import argparse
import os
import random
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import truth  # noqa: E402


def make_batch(rng, rows, width):
    """Features computed in Python per row, the way a hand-written CSV loader does."""
    start = truth.clock()
    data = [[rng.random() * 2 - 1 for _ in range(width)] for _ in range(rows)]  # truth: build_rows self
    truth.span("build_rows", start)
    start = truth.clock()
    features = torch.tensor(data)  # truth: to_tensor self
    truth.span("to_tensor", start)
    return features, (features[:, :8].sum(1) > 0).long()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = random.Random(0)
    model = torch.nn.Sequential(torch.nn.Linear(96, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 2))
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.steps):
        start = truth.clock()
        x, y = make_batch(rng, 128, 96)  # truth: batch total
        truth.span("batch", start)
        start = truth.clock()
        loss = loss_fn(model(x), y)  # truth: forward self
        truth.span("forward", start)
        opt.zero_grad()
        start = truth.clock()
        loss.backward()  # truth: backward self
        truth.span("backward", start)
        start = truth.clock()
        opt.step()  # truth: optimizer self
        truth.span("optimizer", start)
        truth.step()


if __name__ == "__main__":
    main()
