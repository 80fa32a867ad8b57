# A DataLoader with two forked workers feeding an eager training loop.
import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
dataset = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
loader = DataLoader(dataset, batch_size=4, num_workers=2, multiprocessing_context="fork")
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(2):
    for inputs, targets in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        optimizer.step()
print("done")
