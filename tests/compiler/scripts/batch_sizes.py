# A model compiled with dynamic=False fed batches of changing size: one recompile per new size.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
compiled = torch.compile(model, dynamic=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step, batch in enumerate([8, 9, 10, 8, 9, 10, 8, 9]):
    x = torch.randn(batch, 16)
    loss = compiled(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
