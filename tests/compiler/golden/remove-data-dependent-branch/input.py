import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, tuned: bool):
        super().__init__()
        self.tuned = tuned
        self.linear = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        missing = torch.isnan(x)
        if self.tuned:
            x = torch.where(missing, 0.0, x)
        elif missing.any():  # a graph break under torch.compile
            x = torch.where(missing, 0.0, x)
        y = self.linear(x)
        # Clamp when the batch runs hot.
        if y.abs().max() > 10:
            scale = 10 / y.abs().max()
            y = y * scale  # keep the direction
        else:
            scale = torch.ones(())
            y = y
        if (y.sum() > 0): y = -y
        return y, scale


class Router(nn.Module):
    """Two experts of one signature: only the one the batch picks runs."""

    def __init__(self):
        super().__init__()
        self.small = nn.Linear(4, 4)
        self.large = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x, mask):
        h = x * mask
        if h.mean() > 0:
            out = self.small(h)
        else:
            out = self.large(h)
        return self.route(out, mask)

    def route(self, out, mask):
        if mask.sum() > 2:  # returns of calls on the same arguments
            return combine(out, mask)
        else:
            return torch.mul(out, mask)


def combine(out, mask):
    return out + mask
