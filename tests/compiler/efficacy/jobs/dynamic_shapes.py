# efficacy: rule=recompile/dynamic-shape fix=dynamic-shapes removed=recompiles_after<=1
# Batches of five sizes through a model compiled with dynamic=False: a recompile per size.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
compiled = torch.compile(model, backend="aot_eager", dynamic=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for step, batch in enumerate([8, 12, 16, 20, 24, 8]):
    x = torch.randn(batch, 16)
    loss = compiled(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
