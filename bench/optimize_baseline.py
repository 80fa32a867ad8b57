"""How far `torchscope optimize`'s eager baseline (ExportedProgram.module(), what a .pt2 holds) is from the model as
its user calls it (the nn.Module itself), on the four models of bench/optimize_models.py: interleaved rounds of each
form under no_grad, per-call wall time (perf_counter), the median per round and their ratio. The baseline's extra time
(the exported module's input checks and the pytree flattening of every call) inflates the speed-ups optimize reports
for small models; this says by how much.

    python bench/optimize_baseline.py [--rounds 7] [--iterations 30] [--threads 2]
"""

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from optimize_models import export, models  # noqa: E402


def per_call_ms(module, inputs, iterations):
    times = []
    with torch.no_grad():
        for _ in range(iterations):
            started = time.perf_counter()
            module(*inputs)
            times.append((time.perf_counter() - started) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print("| model | nn.Module ms | ExportedProgram.module() ms | ratio, median [min, max] over rounds |")
    print("| --- | --- | --- | --- |")
    for name, (model, inputs) in models().items():
        exported = export(model, inputs).module()
        forms = {"module": model, "exported": exported}
        for form in forms.values():  # warm-up: the allocator, oneDNN's primitives
            per_call_ms(form, inputs, 5)
        medians = {key: [] for key in forms}
        for _ in range(args.rounds):
            for key, form in forms.items():
                medians[key].append(per_call_ms(form, inputs, args.iterations))
        ratios = [e / m for e, m in zip(medians["exported"], medians["module"])]
        print(f"| {name} | {statistics.median(medians['module']):.3f} | {statistics.median(medians['exported']):.3f} "
              f"| {statistics.median(ratios):.2f} [{min(ratios):.2f}, {max(ratios):.2f}] |", flush=True)


if __name__ == "__main__":
    main()
