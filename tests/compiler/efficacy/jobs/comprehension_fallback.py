# efficacy: rule=graph-break/eager-fallback fix=remove-data-dependent-branch removed=graph_breaks_after==0
# Per-modality encoders run from a dict comprehension; an encoder's `if` on a tensor breaks the graph inside
# the comprehension, which torch cannot resume, so the whole forward runs eagerly.
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        h = self.proj(x)
        if h.abs().max() > 4:
            h = h / h.abs().max()
        return h


class MultiModal(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoders = nn.ModuleDict({"image": Encoder(), "text": Encoder()})
        self.head = nn.Linear(32, 1)

    def forward(self, inputs):
        encoded = {name: encoder(inputs[name]) for name, encoder in self.encoders.items()}
        return self.head(torch.cat([encoded["image"], encoded["text"]], dim=1))


torch.manual_seed(0)
model = MultiModal()
compiled = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    batch = {"image": torch.randn(32, 16) * (1 + step), "text": torch.randn(32, 16)}
    loss = compiled(batch).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
