"""A classifier trained on batches that a second thread makes in Python and hands over through a queue.

Lines timed: the worker thread's row loop and tensor conversion, the training thread's wait for the next batch,
its forward and loss, backward and the optimizer's step. The worker's time counts over the training thread's
steps, beside it.
"""
import argparse
import os
import queue
import random
import sys
import threading

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import truth  # noqa: E402

ROWS, WIDTH = 64, 48


def produce(batches, stop, seed):
    """The worker: rows of Python-computed features, queued two batches ahead."""
    rng = random.Random(seed)
    while not stop.is_set():
        start = truth.clock()
        rows = [[rng.gauss(0, 1) for _ in range(WIDTH)] for _ in range(ROWS)]  # truth: worker_rows self
        truth.span("worker_rows", start)
        start = truth.clock()
        batch = torch.tensor(rows)  # truth: worker_tensor self
        truth.span("worker_tensor", start)
        try:
            batches.put(batch, timeout=1)
        except queue.Full:
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    torch.manual_seed(0)
    batches, stop = queue.Queue(maxsize=2), threading.Event()
    worker = threading.Thread(target=produce, args=(batches, stop, 0), name="batch-maker")
    worker.start()
    model = torch.nn.Sequential(torch.nn.Linear(WIDTH, 768), torch.nn.ReLU(), torch.nn.Linear(768, 768),
                                torch.nn.ReLU(), torch.nn.Linear(768, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.steps):
        start = truth.clock()
        x = batches.get()  # truth: wait_batch self
        truth.span("wait_batch", start)
        target = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
        start = truth.clock()
        loss = torch.nn.functional.cross_entropy(model(x), target)  # truth: forward self
        truth.span("forward", start)
        opt.zero_grad()
        start = truth.clock()
        loss.backward()  # truth: backward self
        truth.span("backward", start)
        start = truth.clock()
        opt.step()  # truth: optimizer self
        truth.span("optimizer", start)
        truth.step()
    stop.set()
    worker.join()


if __name__ == "__main__":
    main()
