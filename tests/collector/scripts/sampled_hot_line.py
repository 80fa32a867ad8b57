# An eager training loop with a known hot line: each step runs 200 matrix products on one line (MARK:hot), sleeps
# 10 ms on another (MARK:nap) and takes a tiny optimizer step. `threads`: a worker thread beside it computes on one
# line (MARK:worker) between short sleeps, for longer than the interpreter's switch interval (the sampler, which takes
# the GIL, sees shorter work at the sleep that follows it), and another waits on a condition all along (MARK:idle), as a compile
# pool's idle workers do; `fork`: a fork() child runs the hot line for a while and leaves through os._exit
# (MARK:child).
import os
import sys
import threading
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
mode = sys.argv[2] if len(sys.argv) > 2 else "plain"
torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(200, 200)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def heavy():
    for _ in range(200):
        x.matmul(x)  # MARK:hot


def nap():
    time.sleep(0.01)  # MARK:nap


stop = threading.Event()


def worker():
    while not stop.is_set():
        sum(i * i for i in range(400000))  # MARK:worker
        time.sleep(0.005)


def idle():
    stop.wait()  # MARK:idle


if mode == "threads":
    threading.Thread(target=worker, name="sampled-worker", daemon=True).start()
    threading.Thread(target=idle, name="sampled-idle", daemon=True).start()
if mode == "fork":
    child = os.fork()
    if child == 0:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            x.matmul(x)  # MARK:child
        os._exit(0)
for step in range(steps):
    optimizer.zero_grad()
    heavy()
    nap()
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()
stop.set()
if mode == "fork":
    os.waitpid(child, 0)
print("done", flush=True)
