# One recompile per cause class, each in its own compiled function so that Dynamo's caches stay apart.
# Dynamo is real; backend="eager" skips Inductor's code generation, which recompile causes do not depend on.
import torch

BACKEND = "eager"


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x):
        self.calls += 1  # MARK:attribute
        return self.linear(x) * self.calls


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.linear(x)


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.dropout = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.dropout(self.linear(x))


class Plain:
    pass


class Other:
    pass


def double(x):
    return x * 2


def scaled(x, scale):
    return x * scale


def cast(x):
    return x + 1


def moved(x):
    return x - 1


def product(x, w):
    return x @ w


def choose(x, flag):
    return x + 1 if isinstance(flag, Plain) else x - 1


compiled_double = torch.compile(double, backend=BACKEND)  # MARK:entry-shape
compiled_double(torch.ones(2))
compiled_double(torch.ones(3))  # MARK:call-shape

counter = torch.compile(Counter(), backend=BACKEND)  # MARK:entry-counter
for _ in range(2):
    counter(torch.ones(2, 4))  # MARK:call-counter

compiled_scaled = torch.compile(scaled, backend=BACKEND)
for step in range(2):
    scale = torch.tensor(step + 0.5).item()  # MARK:item
    compiled_scaled(torch.ones(2), scale)  # MARK:call-item

compiled_cast = torch.compile(cast, backend=BACKEND)
compiled_cast(torch.ones(2))
compiled_cast(torch.ones(2, dtype=torch.float64))  # MARK:dtype

compiled_moved = torch.compile(moved, backend=BACKEND)
compiled_moved(torch.ones(2))
compiled_moved(torch.ones(2, device="meta"))  # MARK:device

grad_net = torch.compile(Net(), backend=BACKEND)  # MARK:entry-grad
grad_net(torch.ones(2, 4))
with torch.no_grad():
    grad_net(torch.ones(2, 4))  # MARK:grad

compiled_product = torch.compile(product, backend=BACKEND)
compiled_product(torch.ones(2, 2), torch.ones(2, 2))
with torch.autocast("cpu", dtype=torch.bfloat16):
    compiled_product(torch.ones(2, 2), torch.ones(2, 2))  # MARK:autocast

mode_net = Gate()
compiled_mode_net = torch.compile(mode_net, backend=BACKEND)
compiled_mode_net(torch.ones(2, 4))
mode_net.eval()
compiled_mode_net(torch.ones(2, 4))  # MARK:training

compiled_choose = torch.compile(choose, backend=BACKEND)
compiled_choose(torch.ones(2), Plain())
compiled_choose(torch.ones(2), Other())  # MARK:identity
print("done")
