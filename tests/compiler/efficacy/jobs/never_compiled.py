# efficacy: rule=compile/not-compiled fix=torch-compile removed=compiles
# A small MLP trained eagerly: many tiny ops a step, each dispatched on its own.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(*[layer for _ in range(6) for layer in (nn.Linear(32, 32), nn.GELU())], nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(40):
    x = torch.randn(16, 32)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 8 == 0:
        print(f"step {step} loss={loss.item():.6f}")
