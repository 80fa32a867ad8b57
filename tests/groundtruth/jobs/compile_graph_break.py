"""A compiled feature-scaling module whose forward checks its input's range in Python (`if x.abs().amax() > ...`),
a data-dependent branch that breaks the graph in two. Each half is a chain of element-wise ops that Inductor fuses,
so a compiled call is faster than an eager one, but sixty calls do not win back two compilations.

Timed by hand: every call of the compiled module (the first one compiles both halves) and, when asked, every fifth
batch (`--eager-every N`: every N-th) again through the module run eagerly, beside the compiled calls.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import truth  # noqa: E402



class RangeScaler(torch.nn.Module):
    def forward(self, x):
        for _ in range(5):
            x = torch.tanh(x * 0.8) * 1.2 + 0.01
            x = x.clamp(-1.5, 1.5)
        if x.abs().amax() > 100.0:
            x = x / 100.0
        for _ in range(5):
            x = torch.relu(x + 0.1) * 0.95
            x = torch.where(x > 1.0, x.sqrt(), x)
        return x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--eager-every", type=int, default=5, help="by-hand eager call every N batches")
    args = parser.parse_args()
    torch.manual_seed(0)
    batches = [torch.randn(1 << 20) for _ in range(4)]
    scaler = RangeScaler()
    compiled = torch.compile(scaler)
    total = 0.0
    for call in range(args.calls):
        batch = batches[call % len(batches)]
        start = truth.clock()
        out = compiled(batch)
        truth.span("region_call", start)
        total += float(out[0])
        if truth.recording and call % args.eager_every == args.eager_every - 1:
            start = truth.clock()
            scaler(batches[(call + 2) % len(batches)])  # not the batch just read, whose data is still in cache
            truth.span("eager_call", start)
    truth.fact(graph_breaks=1)
    print(f"checksum {total:.3f}")


if __name__ == "__main__":
    main()
