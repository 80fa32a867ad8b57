# efficacy: rule=graph-break/item fix=item-kept-as-tensor|capture-scalar-outputs removed=graph_breaks_after==0
# The highest-scoring class picks a row of a learned table through a Python int.
import torch
from torch import nn


class Prototype(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(16, 8)
        self.prototypes = nn.Parameter(torch.randn(8, 16))

    def forward(self, x):
        scores = self.score(x).mean(dim=0)
        best = scores.argmax().item()
        return (x - self.prototypes[best]).pow(2).mean()


torch.manual_seed(0)
model = Prototype()
compiled = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    loss = compiled(torch.randn(32, 16))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
