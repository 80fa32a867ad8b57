# A small compiled transformer block trained for STEPS steps (argv[1], default 12), with a second region: a
# loss function compiled with mode="reduce-overhead" (CUDA graphs asked for, which a CPU run cannot use). Prints
# the parity value torchscope fix compares.
import sys

import torch
from torch import nn

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 12
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, width=32, heads=2):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        x = x + self.mlp(self.norm2(x))
        return self.head(x).mean(dim=1)


def squared_error(prediction, target):
    return ((prediction - target) ** 2).mean()


model = Block()
compiled = torch.compile(model)  # MARK:model
loss_fn = torch.compile(squared_error, mode="reduce-overhead")  # MARK:loss
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs, targets = torch.randn(8, 16, 32), torch.randn(8, 1)
for step in range(steps):
    optimizer.zero_grad()
    loss = loss_fn(compiled(inputs), targets)  # MARK:call
    loss.backward()
    optimizer.step()
print(f"parity loss={loss.item():.6f}")
