"""Inference that post-processes each batch of scores with a compiled element-wise function (a hand-written
soft clamp and re-scaling, forty small ops that Inductor fuses into one loop), called often enough (600 times)
for the compilation to pay within the run.

Timed by hand: every call of the compiled function (the first one compiles) and, when asked, every thirtieth batch
(`--eager-every N`: every N-th) again through the same function run eagerly, beside the compiled calls so that both
see the machine alike.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import truth  # noqa: E402



def postprocess(scores):
    for _ in range(10):
        scores = scores * 0.9 + 0.05
        scores = torch.where(scores > 1.0, 1.0 + (scores - 1.0) * 0.1, scores)
        scores = torch.relu(scores) - 0.01
        scores = scores.clamp(-2.0, 2.0)
    return scores


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--eager-every", type=int, default=30, help="by-hand eager call every N batches")
    args = parser.parse_args()
    torch.manual_seed(0)
    batches = [torch.randn(1 << 20) for _ in range(4)]
    fast_postprocess = torch.compile(postprocess)
    total = 0.0
    for call in range(args.calls):
        batch = batches[call % len(batches)]
        start = truth.clock()
        out = fast_postprocess(batch)
        truth.span("region_call", start)
        total += float(out[0])
        if truth.recording and call % args.eager_every == args.eager_every - 1:
            start = truth.clock()
            postprocess(batches[(call + 2) % len(batches)])  # not the batch just read, whose data is still in cache
            truth.span("eager_call", start)
    truth.fact(graph_breaks=0)
    print(f"checksum {total:.3f}")


if __name__ == "__main__":
    main()
