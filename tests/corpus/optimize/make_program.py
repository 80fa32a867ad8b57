"""Exports the tiny programs the optimize tests measure: python make_program.py NAME OUT.pt2.

cnn: conv-bn-relu and a 4-class head, batch dynamic. sparse: a sparse matmul, which AOTInductor's package cannot run
on a CPU (the proxy executor's call fails). cancel: the difference of two nearly equal linear layers, whose
outputs bfloat16 stores with 8 bits of mantissa, so the bf16 variant's parity fails. unexportable: a forward whose branch depends on a tensor's value (for --export).
"""

import sys

import torch


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.head(y.mean(dim=(2, 3)))


class Sparse(torch.nn.Module):
    def forward(self, x):
        return torch.sparse.mm(x.to_sparse(), x.t())


class Cancel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.nearly = torch.nn.Linear(8, 8)
        with torch.no_grad():
            self.nearly.weight.copy_(self.linear.weight + 1e-3)
            self.nearly.bias.copy_(self.linear.bias)

    def forward(self, x):
        return self.linear(x) - self.nearly(x)


def main(name, out):
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=256)
    if name == "cnn":
        program = torch.export.export(Cnn().eval(), (torch.randn(2, 3, 16, 16),), dynamic_shapes=({0: batch},))
    elif name == "sparse":
        program = torch.export.export(Sparse(), (torch.randn(4, 4),))
    elif name == "cancel":
        program = torch.export.export(Cancel().eval(), (torch.randn(4, 8),), dynamic_shapes=({0: batch},))
    else:
        raise SystemExit(f"unknown program {name}")
    torch.export.save(program, out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
