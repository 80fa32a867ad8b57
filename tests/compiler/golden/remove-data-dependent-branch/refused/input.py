import torch


def step(x, log):
    if x.sum() > 0:
        log.append(x)
    if x.mean() > 0:
        return x
    if x.max() > 1:
        x.grad += 1
    if x.min() < 0:
        low = x.clamp(min=0)
    if x.std() > 1:
        x = x / x.std()
    else:
        y = x
    if x.sum() < 0:
        x = -x
    elif x.sum() > 0:
        x = x * 2
    total = x.sum()
    return x, total
