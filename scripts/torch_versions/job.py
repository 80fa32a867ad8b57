"""A small deterministic torch.compile job that makes torch report everything torchscope reads.

Recorded with every torch release by record.py (TORCH_TRACE and the collector at once). Lines that
break the graph are marked `# expect: break-<kind>`, calls that recompile `# expect: recompile-<cause>`;
the manifest keeps the markers as recorded, and the replay tests read them there, not line numbers.
"""

import zlib

import torch

STEPS = 10


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)
        self.drop = torch.nn.Dropout(0.1)
        self.scale = 0.5  # a Python float: Dynamo guards on its value

    def forward(self, x):
        return self.drop(self.linear(x)).relu() * self.scale


def features(x):
    print("features")  # expect: break-print
    y = x.sin()
    if y.sum() > 0:  # expect: break-branch
        y = y * 2
    total = y.sum().item()  # expect: break-item
    checksum = zlib.crc32(b"torchscope")  # expect: break-call
    return y + total + checksum % 7


def normalize(x):
    return (x - x.mean()) / (x.std() + 1e-5)


def small(x):
    return x.cos() + 1


def main():
    torch.manual_seed(0)
    model = Net()
    compiled_model = torch.compile(model, backend="aot_eager")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)

    @torch.compile(backend="eager")
    def optimizer_step():
        optimizer.step()  # expect: break-optimizer

    # Training: a compiled forward and a compiled optimizer step whose lr (a Python float) the
    # scheduler changes each step, so the step recompiles until it hits the recompile limit.
    for step in range(STEPS):
        optimizer.zero_grad()
        batch = 4 if step < 2 else 6  # expect: recompile-shape (the batch size changes)
        loss = compiled_model(torch.randn(batch, 8)).sum()
        loss.backward()
        optimizer_step()  # expect: recompile-lr
        scheduler.step()

    with torch.no_grad():
        compiled_model(torch.randn(6, 8))  # expect: recompile-grad-mode
    model.eval()
    compiled_model(torch.randn(6, 8))  # expect: recompile-training
    model.scale = 0.25
    compiled_model(torch.randn(6, 8))  # expect: recompile-float

    torch.compile(features, backend="eager")(torch.ones(3))

    # Inductor: compile times of every stage and FX graph cache hits on the second run.
    compiled_normalize = torch.compile(normalize)
    compiled_normalize(torch.randn(16))
    compiled_normalize(torch.randn(16, dtype=torch.float64))  # expect: recompile-dtype

    # Shapes that keep changing with dynamic=False: one recompile each, up to the limit.
    compiled_small = torch.compile(small, backend="eager", dynamic=False)
    for n in range(1, 11):
        compiled_small(torch.ones(n))  # expect: recompile-limit


if __name__ == "__main__":
    main()
