# efficacy: rule=recompile/python-scalar fix=tensor-lr removed=recompiles_after==0
# A compiled optimizer step whose float lr a scheduler lowers every step: a recompile (an Inductor
# compilation) per value.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(16, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)


@torch.compile
def train_step():
    optimizer.step()


x = torch.randn(32, 16)
target = x.mean(dim=1, keepdim=True)
for step in range(6):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), target)
    loss.backward()
    train_step()
    scheduler.step()
    print(f"step {step} loss={loss.item():.6f}")
