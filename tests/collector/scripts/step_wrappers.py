# Whose Tensor.backward and Optimizer.zero_grad a job runs as it goes: the bridge's wrappers while they can mark
# steps, torch's own once an optimizer has stepped (a steady step pays for the optimizer's hook alone), the wrappers
# again in a fork child (its loop may use no optimizer), and the wrappers kept when the job compiled before its
# optimizer stepped (Dynamo may have traced them). argv[1]: "eager" or "compiled".
import os
import sys

import torch


def owners():
    def owner(function):
        return "bridge" if "torchscope_bridge" in function.__code__.co_filename else "torch"

    return f"backward={owner(torch.Tensor.backward)} zero_grad={owner(torch.optim.Optimizer.zero_grad)}"


if sys.argv[1] == "compiled":
    torch.compile(lambda x: x * 2)(torch.ones(2))
torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
print("start", owners())
for _ in range(3):  # a manual update: backward() marks the steps
    model.zero_grad(set_to_none=True)
    model(torch.randn(3, 4)).sum().backward()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter -= 0.1 * parameter.grad
print("manual update", owners())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    model(torch.randn(3, 4)).sum().backward()
    optimizer.step()
print("optimizer", owners(), flush=True)
child = os.fork()
if child == 0:
    print("fork child", owners(), flush=True)
    os._exit(0)
os.waitpid(child, 0)
print("parent", owners())
