import torch

model = torch.nn.Linear(4, 4)
compiled = torch.compile(model, dynamic=False)
other = torch.compile(model)  # keeps this comment


@torch.compile
def step(x):
    return x * 2
