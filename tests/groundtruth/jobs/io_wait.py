"""A regression model fed by a generator that waits for each shard's bytes (storage latency, stood for by a sleep)
and decodes them; the loop asks for the next shard on one line.

Lines timed: the `next(shards)` call line, the reader's wait and decode lines, the forward and loss, backward and the
optimizer's step.
"""
import argparse
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import truth  # noqa: E402

ROWS, WIDTH = 64, 256


def read_shards(rng):
    """Shards as a reader of remote storage yields them: each waits for its bytes, then decodes them."""
    while True:
        start = truth.clock()
        time.sleep(0.004)  # truth: fetch self
        truth.span("fetch", start)
        start = truth.clock()
        shard = torch.frombuffer(bytearray(rng.randbytes(ROWS * WIDTH)), dtype=torch.uint8)  # truth: decode self
        truth.span("decode", start)
        yield shard.view(ROWS, WIDTH).float().div_(255)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    torch.manual_seed(0)
    shards = read_shards(random.Random(0))
    model = torch.nn.Sequential(torch.nn.Linear(WIDTH, 1024), torch.nn.Tanh(), torch.nn.Linear(1024, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for _ in range(args.steps):
        start = truth.clock()
        x = next(shards)  # truth: next_shard total
        truth.span("next_shard", start)
        start = truth.clock()
        loss = (model(x).squeeze(1) - x.mean(1)).pow(2).mean()  # truth: forward self
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
