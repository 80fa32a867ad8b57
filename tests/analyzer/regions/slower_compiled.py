# A tiny eager model trained for STEPS steps (argv[1], default 12): torch.compile makes its call slower (a guard
# check and a graph call cost more than its three small ops), so `torchscope fix --fixes torch-compile` makes it
# slower. Prints the parity value torchscope fix compares.
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 12
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
inputs, targets = torch.randn(8, 16), torch.randn(8, 1)
for step in range(steps):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
print(f"parity loss={loss.item():.6f}")
