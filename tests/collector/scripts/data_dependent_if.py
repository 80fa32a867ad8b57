# A data-dependent `if` on a tensor inside a compiled function: one graph break.
import torch


def forward(x):
    y = x * 2
    if y.sum() > 0:  # MARK:break
        return y + 1
    return y - 1


compiled = torch.compile(forward)
for _ in range(3):
    compiled(torch.ones(4))
print("done")
