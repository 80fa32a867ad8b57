# efficacy: rule=graph-break/data-dependent-branch fix=remove-data-dependent-branch removed=graph_breaks_after==0
# Outputs clipped at evaluation; in training squashed smoothly, but only when they run past 1.
import torch
from torch import nn


class Clipped(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        y = self.net(x)
        if not self.training:
            y = y.clamp(-1, 1)
        elif y.abs().max() > 1:
            y = torch.tanh(y)
        return y


torch.manual_seed(0)
model = Clipped()
compiled = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    loss = compiled(torch.randn(32, 16) * (1 + step)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
