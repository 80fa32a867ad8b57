import torch


def step(x, steps):
    n = x.argmax().item()
    for _ in range(n):
        x = x * 2
    scale = float(x.max().item())
    k = x.sum().item()
    k = k + 1
    return x * scale, torch.tensor(k)
