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
