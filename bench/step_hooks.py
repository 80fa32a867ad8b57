#!/usr/bin/env python3
"""What the bridge's step hooks cost the job's own thread, call by call: the optimizer's step post-hook, the
zero_grad() and backward() wrappers (until the bridge takes them out, after the first steps), and the step end's
record in the library behind them.

A whole step's CPU in fresh processes, or even in ABBA blocks of one process (bench/collector_window_ab.py), spreads
by a few per cent on a shared machine, more than these hooks cost. So each phase of the training step is timed
around its own call (`perf_counter_ns`): `zero_grad()`, the forward and loss, `backward()`, `opt.step()`. The job is
the eager MLP of bench/workloads.py (--model), under the collector with its window open (the default), and the hooks
are taken out of torch and put back in ABBA blocks of --block-steps steps (out, in, in, out, ...) in one process,
which cancels a linear drift. A process's figure for a phase is the median of its calls with the hooks in minus the
median with them out; each library runs --processes processes, the libraries' processes interleaved; printed per
phase: the median over the processes, and their range.

    .venv/bin/python bench/step_hooks.py --library build/dev/lib/libtorchscope_collector.so \\
        [--baseline-library LIB] [--processes 4] [--groups 16] [--block-steps 50] [--model bench|large]
"""

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

from collector_window_ab import bridge_step_hooks, collector_env
from paired import interleaved, last_json, run_child
from workloads import MLP_SIZES, eager_mlp

PHASES = ("zero_grad", "forward", "backward", "step", "whole")


def worker(groups, block_steps, model_size):
    import torch

    model, optimizer, inputs, targets = eager_mlp(model_size)
    for _ in range(3):  # the hooks a steady step pays for: the bridge unhooks what can no longer mark steps
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(inputs), targets).backward()
        optimizer.step()
    take_out, put_back = bridge_step_hooks()
    clock = time.perf_counter_ns
    calls = {variant: {phase: [] for phase in PHASES} for variant in ("out", "in")}

    def block(variant, steps, kept=True):
        (put_back if variant == "in" else take_out)()
        times = calls[variant]
        for _ in range(steps):
            start = clock()
            optimizer.zero_grad(set_to_none=True)
            zeroed = clock()
            loss = torch.nn.functional.cross_entropy(model(inputs), targets)
            forward = clock()
            loss.backward()
            backward = clock()
            optimizer.step()
            end = clock()
            if kept:
                for phase, span in zip(PHASES, (zeroed - start, forward - zeroed, backward - forward, end - backward,
                                                end - start)):
                    times[phase].append(span)

    block("out", block_steps, kept=False)  # warm-up
    block("in", block_steps, kept=False)
    for group in range(groups):
        for variant in ("out", "in", "in", "out") if group % 2 == 0 else ("in", "out", "out", "in"):
            block(variant, block_steps)
    put_back()
    print(json.dumps({phase: {variant: statistics.median(calls[variant][phase]) for variant in calls}
                      for phase in PHASES}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", help="libtorchscope_collector.so")
    parser.add_argument("--baseline-library", help="a second library (e.g. before a change), run interleaved")
    parser.add_argument("--processes", type=int, default=4, help="processes per library")
    parser.add_argument("--groups", type=int, default=16, help="ABBA groups of four blocks per process")
    parser.add_argument("--block-steps", type=int, default=50, help="training steps per block")
    parser.add_argument("--model", choices=sorted(MLP_SIZES), default="bench",
                        help="the job: the bench's MLP or one with steps about eight times longer")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.groups, args.block_steps, args.model)
        return
    if not args.library or not os.path.exists(args.library):
        parser.error("--library must name the built libtorchscope_collector.so")
    libraries = [os.path.abspath(args.library)]
    if args.baseline_library:
        libraries.append(os.path.abspath(args.baseline_library))
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as store_dir:
        def run(library):
            env = collector_env(argparse.Namespace(library=library), os.path.join(store_dir, "run.db"), 100,
                                window_signal=False)
            command = [sys.executable, os.path.abspath(__file__), "--worker", "--groups", str(args.groups),
                       "--block-steps", str(args.block_steps), "--model", args.model]
            out, _ = run_child(command, env)
            return last_json(out)

        results = interleaved(libraries, args.processes, run)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {load_before[0]:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end, python {platform.python_version()}; the {args.model} MLP, "
          f"{args.processes} processes a library x {args.groups} ABBA groups of {args.block_steps}-step blocks")
    for library in libraries:
        print(library)
        for phase in PHASES:
            added = [(run[phase]["in"] - run[phase]["out"]) / 1e3 for run in results[library]]
            out = statistics.median(run[phase]["out"] for run in results[library]) / 1e3
            print(f"    {phase:9s} {out:9.1f} us without the hooks; with them {statistics.median(added):+7.2f} us "
                  f"(processes {min(added):+.2f} .. {max(added):+.2f})")


if __name__ == "__main__":
    main()
