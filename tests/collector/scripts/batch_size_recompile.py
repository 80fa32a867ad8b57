# Changing batch sizes under dynamic=False: one recompile per new size, guarded on the size.
import torch


def forward(x):  # MARK:frame
    return torch.relu(x * 3 + 1)


compiled = torch.compile(forward, dynamic=False)
for batch in (2, 3, 4):
    compiled(torch.ones(batch, 4))
print("done")
