# efficacy: rule=graph-break/print fix=print-out-of-compiled removed=graph_breaks_after==0
# A module that logs its input inside forward, compiled whole with torch.compile(model).
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        h = self.body(x)
        logger.debug("hidden %s", h.shape)
        return self.head(h)


torch.manual_seed(0)
model = Classifier()
compiled = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
labels = torch.randint(0, 4, (32,))
for step in range(6):
    loss = nn.functional.cross_entropy(compiled(torch.randn(32, 16)), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.6f}")
