# efficacy: rule=graph-break/item fix=item-kept-as-tensor removed=graph_breaks_after==0
# Per-feature scales read back as a Python list and turned into a tensor again.
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(16, 1)

    def forward(self, x):
        scales = x.std(dim=0).tolist()
        weights = torch.tensor(scales)
        return self.net(x / weights)


torch.manual_seed(0)
model = Scaled()
compiled = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    loss = compiled(torch.randn(32, 16)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
