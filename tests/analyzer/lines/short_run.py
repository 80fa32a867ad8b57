# A very short run: a first step that takes a while (MARK:warmup), then 39 fast steps of a tiny model, far shorter
# than the time between two samples, so that a sample in one of them stands for the time of the steps before it.
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(steps):
    if step == 0:
        time.sleep(0.05)  # MARK:warmup
    optimizer.zero_grad()
    model(torch.randn(4, 8)).sum().backward()  # MARK:step
    optimizer.step()
print("done")
