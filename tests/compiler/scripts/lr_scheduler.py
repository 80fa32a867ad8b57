# A compiled optimizer step whose float lr a scheduler changes every step: one recompile per lr value.
import torch

torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.9)


@torch.compile
def optimizer_step():
    optimizer.step()


x = torch.randn(64, 8)
y = x.sum(dim=1, keepdim=True)
for step in range(6):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer_step()
    scheduler.step()
    print(f"step {step} loss={loss.item():.6f}")
