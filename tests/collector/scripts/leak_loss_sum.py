# A training loop that leaks: the loss is summed as a tensor, so every step's autograd graph stays alive.
import torch


def train(steps):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs, targets = torch.randn(32, 64), torch.randn(32, 1)
    total_loss = 0.0
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss  # MARK:leak
    print(f"mean loss {total_loss.item() / steps:.4f}")


train(12)
