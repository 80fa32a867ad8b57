# A compiled forward with a Python `if` on a tensor value: a graph break at line 12 on every call.
import torch

torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)


@torch.compile(backend="aot_eager")
def forward(x):
    y = model(x)
    if y.mean() > 0:
        y = y * 0.5
    return y


x = torch.randn(64, 8)
target = x.sum(dim=1, keepdim=True)
for step in range(6):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(forward(x), target)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
