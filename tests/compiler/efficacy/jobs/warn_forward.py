# efficacy: rule=graph-break/print fix=print-out-of-compiled removed=graph_breaks_after==0
# A compiled loss that warns about a deprecated reduction on every call.
import warnings

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="aot_eager")
def loss_fn(x, target):
    warnings.warn("loss_fn: reduction='sum' is deprecated, dividing by the batch")
    return (model(x) - target).pow(2).sum() / x.shape[0]


x = torch.randn(32, 16)
target = x.sum(dim=1, keepdim=True)
for step in range(6):
    loss = loss_fn(x, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
