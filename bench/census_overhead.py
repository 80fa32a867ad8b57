#!/usr/bin/env python3
"""CPU cost of the op census's counted step (collector/python/torchscope_bridge/census.py) on two real eager steps.

Runs the census on the step of tests/analyzer/census/collate_mlp.py (a per-sample collate loop before a small MLP)
and of cell_lm.py (an LSTM unrolled by hand), and reports the thread CPU time of the counted step against the
fastest uncounted step before it, per op: what the census costs the one step it counts. With `--against DIR` (the
`collector/python` folder of another version of the bridge, e.g. from `git archive`), the two censuses alternate
and the report adds the paired difference per counted step. Thread CPU, not wall time: a busy machine's
preemption stretches the wall time of a 20 ms step by more than the difference.

    OMP_NUM_THREADS=1 .venv/bin/python bench/census_overhead.py [--repetitions 40] [--against DIR]
"""

import argparse
import importlib
import os
import statistics
import sys
import time

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
sys.path.insert(0, os.path.join(_ROOT, "tests", "analyzer", "census"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import cell_lm  # noqa: E402
import collate_mlp  # noqa: E402


def _census_of(bridge):
    """The census module of the bridge in folder `bridge`, with its code roots found as in a job."""
    for name in [name for name in sys.modules if name.startswith("torchscope_bridge")]:
        del sys.modules[name]
    sys.path.insert(0, bridge)
    try:
        census = importlib.import_module("torchscope_bridge.census")
        importlib.import_module("torchscope_bridge.sites").discover_roots(torch)
    finally:
        sys.path.remove(bridge)
    return census


def _collate_step():
    model = nn.Sequential(nn.Linear(collate_mlp.FEATURES, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scale = torch.ones(collate_mlp.FEATURES)

    def step():
        x, y = collate_mlp.make_batch(512, scale)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def _cell_step():
    model = cell_lm.CellLM(200, 16)
    data = torch.randint(0, 200, (17, 4))

    def step():
        model.zero_grad()
        output, _ = model(data[:16], (torch.zeros(4, 16), torch.zeros(4, 16)))
        nn.functional.cross_entropy(output, data[1:].reshape(-1)).backward()
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(parameter.grad, alpha=-0.5)

    return step


def _counted(census, step):
    """(the counted step's thread CPU, the fastest uncounted step's before it, the ops counted)."""
    rows = []
    counter = census.Census(torch, lambda kind, fields: rows.append(fields), print, lambda: False)
    cpu = []
    start, cpu_start = time.monotonic_ns(), time.thread_time_ns()
    for index in range(census.PROFILED_AFTER + 2):
        step()
        end = time.monotonic_ns()
        cpu.append(time.thread_time_ns() - cpu_start)
        counter.step_stored(index, start, end, sys._getframe())
        start, cpu_start = end, time.thread_time_ns()
    return cpu[census.PROFILED_AFTER], min(cpu[:census.PROFILED_AFTER]), rows[0]["args"]["ops"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repetitions", type=int, default=40)
    parser.add_argument("--against", help="another bridge's collector/python folder, alternated with this one")
    arguments = parser.parse_args()
    torch.manual_seed(0)
    versions = {"this": _census_of(os.path.join(_ROOT, "collector", "python"))}
    if arguments.against:
        versions["against"] = _census_of(arguments.against)
    for name, make in (("collate_mlp", _collate_step), ("cell_lm", _cell_step)):
        step = make()
        for _ in range(5):
            step()
        results = {version: [] for version in versions}
        for repetition in range(arguments.repetitions):
            order = list(versions) if repetition % 2 == 0 else list(reversed(versions))
            for version in order:
                results[version].append(_counted(versions[version], step))
        ops = results["this"][0][2]
        parts = [f"{name}: {ops} ops"]
        for version, measured in results.items():
            counted = statistics.median(result[0] for result in measured)
            plain = statistics.median(result[1] for result in measured)
            parts.append(f"{version}: counted step {counted / 1e6:.2f} ms CPU, uncounted {plain / 1e6:.2f} ms, "
                         f"{(counted - plain) / ops / 1e3:.2f} us per op")
        if "against" in results:
            differences = sorted(this[0] - other[0] for this, other in zip(results["this"], results["against"]))
            median = statistics.median(differences)
            quartiles = differences[len(differences) // 4], differences[3 * len(differences) // 4]
            parts.append(f"this - against: {median / 1e6:.2f} ms per counted step (quartiles {quartiles[0] / 1e6:.2f}"
                         f"..{quartiles[1] / 1e6:.2f}), {median / ops / 1e3:.2f} us per op")
        print("; ".join(parts))


if __name__ == "__main__":
    main()
