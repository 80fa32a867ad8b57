# efficacy: rule=graph-break/data-dependent-branch fix=remove-data-dependent-branch removed=graph_breaks_after==0
# Two experts of one signature; the batch's mean picks which one runs.
import torch
from torch import nn


class TwoExperts(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(16, 16)
        self.small = nn.Linear(16, 1)
        self.large = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        h = torch.relu(self.encoder(x))
        if h.mean() > 0.2:
            return self.large(h)
        else:
            return self.small(h)


torch.manual_seed(0)
model = TwoExperts()
compiled = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    x = torch.randn(32, 16) + 0.2 * step
    loss = compiled(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
