import torch


@torch.compile(dynamic=True)
def step(x):
    print("compiling step", x.shape)
    return x * 2


def loss_fn(x):
    if x.sum() > 0:
        print("positive")
    return x.mean()


def eager(x):
    print("eager code keeps its print")
    return x


loss_fn = torch.compile(loss_fn)
