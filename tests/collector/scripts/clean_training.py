# A small compiled training loop with no graph break and no recompile; exits with code 3 to show
# that the exit code is passed on.
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
compiled = torch.compile(model)
inputs, targets = torch.randn(4, 8), torch.randn(4, 1)
for step in range(6):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(compiled(inputs), targets)
    loss.backward()
    optimizer.step()
    print(f"step {step}")
print("stderr line", file=sys.stderr)
sys.exit(3)
