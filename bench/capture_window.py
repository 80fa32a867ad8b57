#!/usr/bin/env python3
"""What a capture window saves: CPU time outside the window and the size of the store.

Runs a small eager training loop of 10,000 steps (MLP 64-128-10, batch 16, SGD, one intra-op thread) in fresh
processes, interleaved: without the collector, with it recording the whole run, and with it recording a 50-step
window (TORCHSCOPE_WINDOW_STEPS=5000:5050, as `torchscope run --steps 5000:5050` sets it). For each run it reports
the CPU time of the whole process tree (getrusage of the waited child: user + system, every thread, import and
exit included) and the CPU time of the process over the training loop alone (time.process_time, every thread:
the collector's sampler thread counts), and for the collector's runs the store's size and the CPU time of the
collector's work at one step end, timed on its own in one more run per side (after the loop, 5 x 4,000 calls of its
optimizer hook, the median batch: outside the window for the window's run, recorded for the whole run's). The figures are the medians over runs of each side,
with the range.

    .venv/bin/python bench/capture_window.py --library build/<area>/lib/libtorchscope_collector.so \
        [--repetitions 5] [--steps 10000] [--window 5000:5050]
"""

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

from paired import interleaved, last_json, run_child, spread


def worker(steps, time_step_end):
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs, targets = torch.randn(16, 64), torch.randint(0, 10, (16,))
    start = time.process_time()
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(inputs), targets).backward()
        optimizer.step()
    result = {"loop_cpu": time.process_time() - start}
    if time_step_end and "torchscope_bridge.hooks" in sys.modules:
        # The collector's work at one step end, timed on its own, which noise does not hide: after the loop a
        # window's run is outside its window (the step is counted and dropped), a whole run's records it. Five
        # batches, the median.
        hook = sys.modules["torchscope_bridge.hooks"]._on_optimizer_step
        batches = []
        for _ in range(5):
            begin = time.process_time()
            for _ in range(4000):
                hook(optimizer, (), {})
            batches.append((time.process_time() - begin) / 4000)
        result["step_end"] = statistics.median(batches)
    print(json.dumps(result))


def run_once(library, window, steps, store, time_step_end=False):
    env = dict(os.environ)
    for name in ("LD_PRELOAD", "TORCHSCOPE_WINDOW_STEPS"):
        env.pop(name, None)
    if library:
        env["LD_PRELOAD"] = library
        env["TORCHSCOPE_OUTPUT"] = store
        env["TORCHSCOPE_SUMMARY"] = "0"
        env["TORCHSCOPE_SAMPLE_HZ"] = "0"  # the collector without its stack sampler (bench/sampler_overhead.py has it)
        if window:
            env["TORCHSCOPE_WINDOW_STEPS"] = window
    command = [sys.executable, __file__, "--worker", "--steps", str(steps)]
    if time_step_end:
        command.append("--time-step-end")
    out, tree_cpu = run_child(command, env)
    result = last_json(out)
    result["tree_cpu"] = tree_cpu
    if library:
        result["store_bytes"] = os.path.getsize(store)
        os.remove(store)
    return result


def shown(values, unit, scale=1.0, digits=2):
    middle, low, high = spread(values)
    return f"{middle * scale:.{digits}f} {unit} ({low * scale:.{digits}f}..{high * scale:.{digits}f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--window", default="5000:5050")
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--time-step-end", action="store_true")
    args = parser.parse_args()
    if args.worker:
        worker(args.steps, args.time_step_end)
        return
    if not args.library or not os.path.exists(args.library):
        parser.error("--library must name libtorchscope_collector.so")
    sides = {"plain": (None, None), "whole": (args.library, None), "window": (args.library, args.window)}
    with tempfile.TemporaryDirectory() as scratch:
        store = os.path.join(scratch, "bench.db")
        results = interleaved(sides, args.repetitions, lambda name: run_once(*sides[name], args.steps, store))
        # The step end timed in runs of their own: its extra steps would swell the whole run's store.
        step_end = {name: run_once(*sides[name], args.steps, store, time_step_end=True)["step_end"]
                    for name in ("whole", "window")}
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
          f"{args.steps} steps, window {args.window}, {args.repetitions} runs per side (median, range)")
    plain_tree = statistics.median(r["tree_cpu"] for r in results["plain"])
    plain_loop = statistics.median(r["loop_cpu"] for r in results["plain"])
    for name in sides:
        runs = results[name]
        tree = [r["tree_cpu"] for r in runs]
        loop = [r["loop_cpu"] for r in runs]
        line = (f"{name:6} process tree CPU {shown(tree, 's')} ({(statistics.median(tree) / plain_tree - 1) * 100:+.1f} %)"
                f"   training loop CPU {shown(loop, 's')} ({(statistics.median(loop) / plain_loop - 1) * 100:+.1f} %)")
        if "store_bytes" in runs[0]:
            line += f"   store {shown([r['store_bytes'] for r in runs], 'MiB', 1 / 2**20)}"
            line += f"   one step end {step_end[name] * 1e6:.1f} us"
        print(line)
    whole = statistics.median(r["store_bytes"] for r in results["whole"])
    window = statistics.median(r["store_bytes"] for r in results["window"])
    print(f"store of the window / store of the whole run: {window / whole * 100:.1f} %")


if __name__ == "__main__":
    main()
