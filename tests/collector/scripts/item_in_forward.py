# `.item()` inside a compiled module's forward: a graph break at that line.
import torch


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.linear(x)
        scale = y.abs().max().item()  # MARK:break
        return y / (scale + 1.0)


model = torch.compile(Scale())
with torch.no_grad():
    for _ in range(2):
        model(torch.ones(2, 4))
print("done")
