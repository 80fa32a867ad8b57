# Starts children every way a training job does: multiprocessing with fork and with spawn (8 each),
# a chain of subprocesses (python -> sh -> python), and, with argv[1] == "dataloader", a torch
# DataLoader with 8 workers. Each child marks a few steps. Prints "done" when everything joined.
import multiprocessing
import os
import subprocess
import sys

import torchscope


def work(count):
    for _ in range(count):
        torchscope.step()
    return os.getpid()


def chain(depth):
    work(3)
    if depth > 0:
        inner = f"{sys.executable} {os.path.abspath(__file__)} chain {depth - 1}"
        subprocess.run(["/bin/sh", "-c", inner], check=True)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "all"
    if mode == "chain":
        chain(int(sys.argv[2]))
        sys.exit(0)
    work(3)
    workers = set()
    for method in ("fork", "spawn"):
        with multiprocessing.get_context(method).Pool(8) as pool:
            workers.update(pool.map(work, [3] * 16))
    print("workers", *sorted(workers), flush=True)
    chain(2)
    if mode == "dataloader":
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        data = TensorDataset(torch.arange(256, dtype=torch.float32))
        for _ in DataLoader(data, batch_size=8, num_workers=8):
            torchscope.step()
    print("done", flush=True)
