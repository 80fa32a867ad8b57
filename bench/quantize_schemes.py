#!/usr/bin/env python3
"""What each scheme of the `quantize-dynamic` fix (torchscope_compiler.runtime.QUANTIZE_SCHEMES) does to a
Linear-heavy model's call on this machine's CPU, eager and under torch.compile: the basis for proposing the torch.ao
scheme, not torchao's, from a quantization/candidate finding (docs/compiler.md, docs/performance.md).

For each MLP shape, the same weights run as fp32, torch.ao dynamic int8 and torchao's int8 weight-only and int8
dynamic-activation configs, each eager and (with --compile) compiled, in rotated rounds so that a drift of the
machine reaches every way alike. A round's figure is the median of --calls calls under torch.inference_mode();
printed per way: the median over --rounds rounds with the rounds' range, the speed-up against fp32 of the same mode
and the largest difference of the outputs relative to fp32's largest magnitude.

    .venv/bin/python bench/quantize_schemes.py [--rounds 5] [--calls 30] [--threads 1] [--compile]
"""

import argparse
import copy
import platform
import statistics

import torch
from torch import nn

from transformer_fast_path import median_call

# (layer widths, batch): the ranker of tests/inference/jobs/ranking_mlp.py and a wider classifier.
SHAPES = [((80, 512, 512, 256, 1), 256), ((256, 1024, 1024, 10), 64)]


def mlp(widths):
    layers = []
    for inputs, outputs in zip(widths, widths[1:]):
        layers += [nn.Linear(inputs, outputs), nn.ReLU()]
    return nn.Sequential(*layers[:-1]).eval()


def quantized(model, scheme):
    """A quantized copy of `model`, or the reason it cannot be made."""
    model = copy.deepcopy(model)
    if scheme == "fp32":
        return model
    if scheme == "torch.ao":
        return torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    try:
        from torchao.quantization import Int8DynamicActivationInt8WeightConfig, Int8WeightOnlyConfig, quantize_
    except ImportError as error:
        return f"torchao is not importable: {error}"
    config = Int8WeightOnlyConfig() if scheme == "int8-weight-only" else Int8DynamicActivationInt8WeightConfig()
    quantize_(model, config)
    return model


def measure(shape, rounds, calls, modes):
    widths, batch = shape
    torch.manual_seed(0)
    base = mlp(widths)
    inputs = torch.randn(batch, widths[0])
    with torch.inference_mode():
        reference = base(inputs)
    scale = reference.abs().max().item()
    ways, notes = {}, []
    for scheme in ("fp32", "torch.ao", "int8-weight-only", "int8-dynamic"):
        for mode in modes:
            model = quantized(base, scheme)
            if isinstance(model, str):
                notes.append(f"{scheme}: {model}")
                break
            if mode == "compiled":
                model = torch.compile(model)
            try:
                with torch.inference_mode():
                    diff = (model(inputs) - reference).abs().max().item() / scale
            except Exception as error:  # a scheme torch cannot compile is a result, not a failure of the benchmark
                notes.append(f"{scheme} {mode}: {type(error).__name__}: {str(error).splitlines()[0][:120]}")
                continue
            ways[(scheme, mode)] = (model, diff)
    figures = {way: [] for way in ways}
    names = list(ways)
    for round_index in range(rounds):
        shift = round_index % len(names)
        for way in names[shift:] + names[:shift]:
            model = ways[way][0]
            with torch.inference_mode():
                median_call(lambda: model(inputs), 3)
                figures[way].append(median_call(lambda: model(inputs), calls))
    print(f"MLP {'-'.join(map(str, widths))}, batch {batch}")
    for (scheme, mode), times in figures.items():
        fp32 = statistics.median(figures[("fp32", mode)])
        median = statistics.median(times)
        print(f"  {scheme:17s} {mode:8s} {median:7.3f} ms [{min(times):.3f}, {max(times):.3f}]  "
              f"{fp32 / median:5.2f}x of fp32 {mode}  max rel. diff {ways[(scheme, mode)][1]:.2g}")
    for note in notes:
        print(f"  {note}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--compile", action="store_true", help="also time each way under torch.compile")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    # Every compiled torchao model goes through the same torchao/utils.py wrapper, whose recompiles for one model
    # after another would reach Dynamo's default limit of 8 and leave the last ones eager; a job has one model.
    torch._dynamo.config.recompile_limit = 64
    try:
        import torchao
        torchao_version = torchao.__version__
    except ImportError:
        torchao_version = "not installed"
    print(f"{platform.processor() or platform.machine()}, {args.threads} thread(s), torch {torch.__version__}, "
          f"torchao {torchao_version}, {args.rounds} rounds of {args.calls} calls")
    modes = ("eager", "compiled") if args.compile else ("eager",)
    for shape in SHAPES:
        measure(shape, args.rounds, args.calls, modes)


if __name__ == "__main__":
    main()
