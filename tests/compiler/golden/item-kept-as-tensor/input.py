import torch
from torch import nn


class Picker(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(8, 4))

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        best = scores.argmax().item()  # one row per batch
        row = self.table[best]
        total = scores.sum().item()
        offset = torch.tensor(total)
        ids = scores.argsort().tolist()
        return row + offset + self.table[ids, 0].sum()
