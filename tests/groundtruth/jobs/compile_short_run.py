"""A tiny MLP compiled and trained for a few dozen steps: its calls are too short and too few for the compile time
to come back (torch.compile of a small model in a short run).

Timed by hand: every call of the compiled model (the first one compiles its forward), every backward (the first
one compiles the backward graph) and, when asked, the same batch through the model run eagerly at every step.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import truth  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 16), torch.randn(32, 1)
    for _ in range(args.steps):
        opt.zero_grad()
        start = truth.clock()
        prediction = compiled(x)
        truth.span("region_call", start)
        loss = torch.nn.functional.mse_loss(prediction, y)
        start = truth.clock()
        loss.backward()
        truth.span("backward_call", start)
        opt.step()
        truth.step()
        if truth.recording:
            start = truth.clock()
            model(x)
            truth.span("eager_call", start)
    truth.fact(graph_breaks=0)


if __name__ == "__main__":
    main()
