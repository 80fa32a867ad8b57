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
from optimize_models import EncoderClassifier, LstmClassifier, MlpRecommender, ResNetSmall  # noqa: E402


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
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=1024)
    models = {
        "resnet_small": (ResNetSmall(), (torch.randn(8, 3, 32, 32),)),
        "encoder_classifier": (EncoderClassifier(), (torch.randint(0, 5000, (8, 64)),)),
        "lstm_classifier": (LstmClassifier(), (torch.randint(0, 5000, (8, 64)),)),
        "mlp_recommender": (MlpRecommender(), (torch.randint(0, 10000, (256,)), torch.randint(0, 5000, (256,)))),
    }
    print("| model | nn.Module ms | ExportedProgram.module() ms | ratio, median [min, max] over rounds |")
    print("| --- | --- | --- | --- |")
    for name, (model, inputs) in models.items():
        model.eval()
        exported = torch.export.export(model, inputs, dynamic_shapes=tuple({0: batch} for _ in inputs)).module()
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
