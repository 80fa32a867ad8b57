"""Builds the package aoti_server serves: a ranking MLP (embedding-free, 64 features -> 10 scores) exported with a
dynamic batch and compiled ahead of time by AOTInductor.

    python export_ranker.py ranker.pt2 [--features 64] [--device cpu|cuda]
"""

import argparse
import os

import torch


class Ranker(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(features, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                          torch.nn.ReLU(), torch.nn.Linear(256, 10))

    def forward(self, x):
        return torch.softmax(self.layers(x), dim=-1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", help="the .pt2 to write (refused when it exists)")
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the package runs")
    args = parser.parse_args()
    if os.path.exists(args.package):
        parser.error(f"{args.package} exists: not overwritten")
    torch.manual_seed(0)
    model = Ranker(args.features).eval().to(args.device)
    example = (torch.randn(8, args.features, device=args.device),)
    program = torch.export.export(model, example, dynamic_shapes={"x": {0: torch.export.Dim.DYNAMIC}})
    torch._inductor.aoti_compile_and_package(program, package_path=args.package)
    print(args.package)


if __name__ == "__main__":
    main()
