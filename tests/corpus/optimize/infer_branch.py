# Inference with a gate that reads a tensor's value in forward: torch.export cannot trace the branch.
import torch


class GatedHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 4)

    def forward(self, x):
        scores = self.linear(x)
        if scores.sum() > 0:
            return scores.softmax(dim=-1)
        return scores


model = GatedHead().eval()
with torch.no_grad():
    for _ in range(3):
        print(model(torch.randn(8, 16)).shape)
