# A Python float argument that changes every call, with a recompile limit of 2: the limit is hit
# and the frame falls back to eager.
import torch

torch._dynamo.config.recompile_limit = 2


def scale(x, factor):  # MARK:frame
    return x * factor


compiled = torch.compile(scale, dynamic=False)
for factor in (1.5, 2.5, 3.5, 4.5):
    compiled(torch.ones(2), factor)  # MARK:call
print("done")
