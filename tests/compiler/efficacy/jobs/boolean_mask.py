# efficacy: rule=graph-break/dynamic-output-shape fix=capture-dynamic-output-shape-ops removed=graph_breaks_after==0
# The loss averages only the positive predictions: a boolean mask of data-dependent size.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="aot_eager")
def positive_loss(x):
    out = model(x).squeeze(1)
    positive = torch.nonzero(out > 0).squeeze(1)
    return out[positive].pow(2).sum() / x.shape[0]


for step in range(6):
    loss = positive_loss(torch.randn(32, 16))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
