"""LoRA-style adapters switched off in a context manager, as peft's `disable_adapter()` does.

Run:  python samples/frameworks/adapter_flags.py

The compiled model is trained (gradients on), evaluated under torch.no_grad() (a grad-mode recompile), then
evaluated again with its adapters disabled: the adapter flag `self._adapters_disabled` is read in forward and
guarded, so that block compiles the model a third time, for the flag and not for the grad mode.
"""

import contextlib

import torch
from torch import nn


class LoraLinear(nn.Module):
    """A frozen linear layer plus a trainable low-rank update that can be switched off."""

    def __init__(self, features, rank=4):
        super().__init__()
        self.base = nn.Linear(features, features)
        self.base.requires_grad_(False)
        self.lora_a = nn.Linear(features, rank, bias=False)
        self.lora_b = nn.Linear(rank, features, bias=False)
        self._adapters_disabled = False

    def forward(self, x):
        if self._adapters_disabled:
            return self.base(x)
        return self.base(x) + self.lora_b(self.lora_a(x))


class AdaptedModel(nn.Module):
    def __init__(self, features=32):
        super().__init__()
        self.layer = LoraLinear(features)
        self.head = nn.Linear(features, 1)

    def forward(self, x):
        return self.head(torch.relu(self.layer(x)))

    @contextlib.contextmanager
    def disable_adapter(self):
        self.layer._adapters_disabled = True
        try:
            yield
        finally:
            self.layer._adapters_disabled = False


def main():
    torch.manual_seed(0)
    model = AdaptedModel()
    compiled = torch.compile(model)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
    features = torch.randn(64, 32)
    targets = features.mean(dim=1, keepdim=True)
    for _ in range(5):
        loss = nn.functional.mse_loss(compiled(features), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    with torch.no_grad():
        adapted = nn.functional.mse_loss(compiled(features), targets)
        with model.disable_adapter():
            base = nn.functional.mse_loss(compiled(features), targets)
    print(f"loss with adapters {adapted.item():.4f}, without {base.item():.4f}")


if __name__ == "__main__":
    main()
