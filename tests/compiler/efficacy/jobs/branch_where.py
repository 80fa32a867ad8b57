# efficacy: rule=graph-break/data-dependent-branch fix=remove-data-dependent-branch removed=graph_breaks_after==0
# Inputs with missing values are cleaned only when the batch has any: a Python `if` on a tensor.
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        missing = torch.isnan(x)
        if missing.any():
            x = torch.where(missing, torch.zeros_like(x), x)
        return self.net(x)


torch.manual_seed(0)
model = Regressor()
compiled = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    x = torch.randn(32, 16)
    x[0, step] = float("nan")
    loss = compiled(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
