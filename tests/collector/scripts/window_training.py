# A compiled training loop whose batch size changes at step 1 (a recompile before any window), then trains on for
# `steps` steps of `sleep_ms` each: the capture-window tests keep a part of it.
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
sleep_ms = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
torch.manual_seed(0)
model = torch.nn.Linear(8, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
compiled = torch.compile(model, dynamic=False)
for step in range(steps):
    batch = 2 if step == 0 else 3  # the second step recompiles for the new size
    optimizer.zero_grad()
    compiled(torch.randn(batch, 8)).sum().backward()
    optimizer.step()
    if sleep_ms > 0:
        time.sleep(sleep_ms / 1000)
print("done", flush=True)
