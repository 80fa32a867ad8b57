# A job whose memory peak is one layer's activations: a 64 MiB intermediate that lives only inside each
# step (forward and backward) and is gone at the step's end.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 65536), torch.nn.ReLU(), torch.nn.Linear(65536, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
inputs, targets = torch.randn(256, 64), torch.randn(256, 1)
for step in range(5):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
