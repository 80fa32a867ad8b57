"""DDP on the CPU over gloo, one process per rank (started by torchrun): a small MLP, a few steps.

SLOW_RANK sleeps before each forward (a straggler the others wait for in their all-reduces),
RECOMPILE_RANK feeds one batch of another size (an extra recompile on that rank only), CRASH_RANK
kills itself with SIGKILL at step CRASH_STEP. COMPILE=1 compiles the model that DDP wraps (aot_eager):
DDP(torch.compile(model)); torch.compile(DDP(model)) compiles no graph with torch 2.13.
"""
import os
import signal
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

STEPS = int(os.environ.get("STEPS", "8"))
SLOW_RANK = int(os.environ.get("SLOW_RANK", "-1"))
RECOMPILE_RANK = int(os.environ.get("RECOMPILE_RANK", "-1"))
CRASH_RANK = int(os.environ.get("CRASH_RANK", "-1"))
CRASH_STEP = int(os.environ.get("CRASH_STEP", "3"))

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 8))
if os.environ.get("COMPILE") == "1":
    model = torch.compile(model, backend="aot_eager")
model = DistributedDataParallel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for step in range(STEPS):
    batch = 32
    if rank == RECOMPILE_RANK and step == STEPS // 2:
        batch = 24  # MARK:divergent_batch
    if rank == CRASH_RANK and step == CRASH_STEP:
        time.sleep(0.5)  # a crash some time into training: the steps before it are committed (every 100 ms)
        os.kill(os.getpid(), signal.SIGKILL)
    if rank == SLOW_RANK:
        time.sleep(0.05)
    inputs = torch.randn(batch, 64)
    optimizer.zero_grad()
    loss = model(inputs).square().mean()  # MARK:forward
    loss.backward()
    optimizer.step()

dist.barrier()
dist.destroy_process_group()
