# An MLP's training loop whose batches are built in Python: make_batch() takes most of each step, on lines of its
# own, so that the loop's line that calls it (MARK:call) holds the function's time below it and none as self.
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 400
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = [[float((i * 7 + j) % 13) for j in range(32)] for i in range(4096)]


def make_batch(idx):
    rows = [[v * 0.1 + v % 3 for v in data[i % len(data)]] for i in range(idx, idx + 64)]
    for _ in range(200):
        total = sum(sum(row) for row in rows)  # MARK:sum
    return torch.tensor(rows), torch.full((64, 1), total)


for step in range(steps):
    xb, yb = make_batch(step * 64)  # MARK:call
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(xb), yb)
    loss.backward()
    optimizer.step()
print("done")
