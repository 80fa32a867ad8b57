# Trains in three phases of 5 steps, waiting on stdin between them, so that a driver can send SIGUSR2 at known
# points; with --own-handler the job has a SIGUSR2 handler of its own, which must keep running. After each "go"
# line it waits for the collector's window to change (torchscope_window_open) before training on.
import ctypes
import signal
import sys
import time

import torch

own_handler_calls = []
if "--own-handler" in sys.argv:
    signal.signal(signal.SIGUSR2, lambda signum, frame: own_handler_calls.append(signum))
window_open = ctypes.CDLL(None).torchscope_window_open
model = torch.nn.Linear(8, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(4, 8)
for phase in range(3):
    for _ in range(5):
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
    was_open = window_open()
    print(f"phase {phase} done", flush=True)
    if phase == 2:
        break
    sys.stdin.readline()
    deadline = time.monotonic() + 20
    while window_open() == was_open and time.monotonic() < deadline:
        time.sleep(0.01)
print(f"own handler calls {len(own_handler_calls)}", flush=True)
