# A small MLP compiled with torch.compile and trained for STEPS steps (argv[1], default 150) on the CPU. Once it has
# compiled, Inductor's compile workers (a thread pool) wait idle beside the steps, whose time is on their forward
# (MARK:forward) and backward (MARK:backward) lines.
import sys

import torch
from torch import nn

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 150
torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 1))
compiled = torch.compile(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs, targets = torch.randn(512, 64), torch.randn(512, 1)
for step in range(steps):
    optimizer.zero_grad()
    loss = ((compiled(inputs) - targets) ** 2).mean()  # MARK:forward
    loss.backward()  # MARK:backward
    optimizer.step()
print("done", flush=True)
