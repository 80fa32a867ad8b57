"""A 2-rank DDP job on the CPU over gloo, started by torchrun: a small MLP compiled under DDP.

Each rank logs its loss every step (`rank R step S loss=X`). SLOW_RANK sleeps SLOW_SECONDS before each
forward (a straggler); FAIL_RANK raises at step FAIL_STEP with a message on its stderr; BATCHES="a,b,..."
cycles the batch size (shape recompiles under dynamic=False). STEPS steps (default 12). BACKEND is
torch.compile's (default inductor). FAIL_ONLY_UNDER_FIXES=1 makes FAIL_RANK fail only where torchscope
fix applies fixes (TORCHSCOPE_FIXES set): the baseline runs, the fix's runs fail.
"""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

STEPS = int(os.environ.get("STEPS", "12"))
SLOW_RANK = int(os.environ.get("SLOW_RANK", "-1"))
SLOW_SECONDS = float(os.environ.get("SLOW_SECONDS", "0.02"))
FAIL_RANK = int(os.environ.get("FAIL_RANK", "-1"))
FAIL_STEP = int(os.environ.get("FAIL_STEP", "2"))
if os.environ.get("FAIL_ONLY_UNDER_FIXES") == "1" and not os.environ.get("TORCHSCOPE_FIXES"):
    FAIL_RANK = -1
BATCHES = [int(size) for size in os.environ.get("BATCHES", "32").split(",")]

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
if os.environ.get("COMPILE", "1") == "1":
    model = torch.compile(model, dynamic=False, backend=os.environ.get("BACKEND", "inductor"))
model = DistributedDataParallel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
try:
    for step in range(STEPS):
        if rank == FAIL_RANK and step == FAIL_STEP:
            print(f"rank {rank}: injected failure at step {step}", file=sys.stderr, flush=True)
            raise RuntimeError("injected rank failure")
        if rank == SLOW_RANK:
            time.sleep(SLOW_SECONDS)
        inputs = torch.randn(BATCHES[step % len(BATCHES)], 32)
        optimizer.zero_grad()
        loss = model(inputs).square().mean()
        loss.backward()
        optimizer.step()
        print(f"rank {rank} step {step} loss={loss.item():.6f}", flush=True)
finally:
    dist.destroy_process_group()
