# A tiny model compiled and trained for a few steps: compiling it costs far more than it could save at this length.
import sys

import torch
from torch import nn

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
compiled = torch.compile(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs, targets = torch.randn(4, 8), torch.randn(4, 1)
for step in range(steps):
    optimizer.zero_grad()
    loss = ((compiled(inputs) - targets) ** 2).mean()
    loss.backward()
    optimizer.step()
print(f"loss={loss.item():.6f}")
