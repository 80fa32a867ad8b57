# A training loop that leaks: every step's output (1 MiB, with its autograd graph) is kept in a list
# for logging, at module level.
import torch

torch.manual_seed(0)
model = torch.nn.Linear(256, 1024)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs = torch.randn(256, 256)
history = []
for step in range(20):
    optimizer.zero_grad()
    outputs = model(inputs)
    loss = outputs.square().mean()
    loss.backward()
    optimizer.step()
    history.append(outputs)  # MARK:leak
print(f"loss {loss.item():.4f}")
