#!/usr/bin/env python3
"""Steady-state step-time overhead of the collector on a CPU training loop.

Runs the same compiled training loop in fresh processes, alternating between plain runs and runs
with libtorchscope_collector.so preloaded (interleaved, so that drifts of the machine hit both
sides alike). Each run reports the median of its steady-state step times (after warm-up, so
compile time is left out), both wall time and the training thread's CPU time (which a busy
machine's other processes disturb much less); the result is the median over runs of each side,
with the range over runs. Runs with the collector also time the work it adds to every step (the
optimizer hook, recording one step through the C ABI) on its own, which noise does not hide.

    .venv/bin/python bench/collector_overhead.py --library build/<area>/lib/libtorchscope_collector.so \
        [--repetitions 7] [--steps 300] [--compile]
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


def worker(steps, warmup, compile_model):
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    forward = torch.compile(model) if compile_model else model
    inputs, targets = torch.randn(64, 256), torch.randint(0, 10, (64,))
    wall, cpu = [], []
    for step in range(warmup + steps):
        start_wall, start_cpu = time.perf_counter(), time.thread_time()
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(forward(inputs), targets).backward()
        optimizer.step()
        if step >= warmup:
            wall.append(time.perf_counter() - start_wall)
            cpu.append(time.thread_time() - start_cpu)
    result = {"wall": statistics.median(wall), "cpu": statistics.median(cpu)}
    if "torchscope_bridge.hooks" in sys.modules:
        # What the collector adds to each step, timed on its own: the optimizer hook records a step.
        hook = sys.modules["torchscope_bridge.hooks"]._on_optimizer_step
        calls = 20000
        start = time.perf_counter()
        for _ in range(calls):
            hook(optimizer, (), {})
        result["hook"] = (time.perf_counter() - start) / calls
    print(json.dumps(result))


def run_once(library, steps, warmup, compile_model, store_dir):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if library:
        env["LD_PRELOAD"] = library
        env["TORCHSCOPE_OUTPUT"] = os.path.join(store_dir, "bench.db")
        env["TORCHSCOPE_SUMMARY"] = "0"
        env["TORCHSCOPE_SAMPLE_HZ"] = "0"  # the collector without its stack sampler (bench/sampler_overhead.py has it)
    command = [sys.executable, __file__, "--worker", "--steps", str(steps), "--warmup", str(warmup)]
    if compile_model:
        command.append("--compile")
    out, _ = run_child(command, env)
    return last_json(out)


def report(name, plain, traced):
    base, base_low, base_high = spread(plain)
    measured, low, high = spread(traced)
    print(f"{name:5} plain {base * 1e3:8.3f} ms/step (runs {base_low * 1e3:.3f}..{base_high * 1e3:.3f})   "
          f"collector {measured * 1e3:8.3f} ms/step (runs {low * 1e3:.3f}..{high * 1e3:.3f})   "
          f"overhead {(measured / base - 1) * 100:+.2f} %")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", help="libtorchscope_collector.so")
    parser.add_argument("--repetitions", type=int, default=5, help="runs per side")
    parser.add_argument("--steps", type=int, default=300, help="measured steps per run")
    parser.add_argument("--warmup", type=int, default=30, help="steps left out at the start of each run")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (longer runs)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.steps, args.warmup, args.compile)
        return
    if not args.library or not os.path.exists(args.library):
        parser.error("--library must name the built libtorchscope_collector.so")
    libraries = {"plain": None, "collector": args.library}
    with tempfile.TemporaryDirectory() as store_dir:
        results = interleaved(libraries, args.repetitions, lambda side: run_once(
            libraries[side], args.steps, args.warmup, args.compile, store_dir))
    plain, traced = results["plain"], results["collector"]
    load = os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {load:.1f}, python "
          f"{platform.python_version()}; {args.repetitions} interleaved runs per side, {args.steps} steps each"
          f"{', compiled' if args.compile else ''}")
    report("wall", [run["wall"] for run in plain], [run["wall"] for run in traced])
    report("cpu", [run["cpu"] for run in plain], [run["cpu"] for run in traced])
    hook = statistics.median(run["hook"] for run in traced)
    print(f"the step hook alone: {hook * 1e6:.2f} us per step = "
          f"{hook / statistics.median(run['cpu'] for run in plain) * 100:.2f} % of a plain step's CPU time")


if __name__ == "__main__":
    main()
