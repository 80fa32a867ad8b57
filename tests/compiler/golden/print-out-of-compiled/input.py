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


import logging
import warnings

log = logging.getLogger(__name__)


class Head(torch.nn.Module):
    def forward(self, x):
        # the finding names the logging line of a module compiled by torch.compile(model)
        log.info("head input %s", x.shape)
        warnings.warn("slow path")
        return x.relu()

    def reset(self):
        log.info("not compiled: no finding names it")
