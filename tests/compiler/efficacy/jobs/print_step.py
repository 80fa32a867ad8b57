# efficacy: rule=graph-break/print fix=print-out-of-compiled removed=graph_breaks_after==0
# A compiled training function that prints the shape it was given.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="aot_eager")
def forward_loss(x):
    out = model(x)
    print("batch", x.shape)
    return out.pow(2).mean()


for step in range(6):
    loss = forward_loss(torch.randn(32, 16))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
