#!/usr/bin/env python3
"""What the stack sampler costs an eager CPU training job, beside the collector without it and torch.profiler.

Runs the same eager MLP training loop (256-512-512-10, batch 64, SGD, one intra-op thread) in fresh processes, the
variants interleaved and their order rotated every repetition, so that drifts of the shared machine hit every side
alike: no collector; the collector with TORCHSCOPE_SAMPLE_HZ=0; the collector with the sampler at --hz (100 by default,
the collector's own default); torch.profiler with CPU activities over the whole loop; and Scalene (`--scalene`, when it
is installed:
bench/requirements.txt). Measures the CPU time of the whole process tree (getrusage of the waited children: every
thread, the import of torch and the exit included), of the training loop alone (time.process_time) and of the
sampler's own thread over the loop (/proc/self/task, by its name: noise-free where the ratios are not). Prints each
variant's median over the repetitions, as a ratio to the plain run of the same repetition (median and range of the
paired ratios).

    .venv/bin/python bench/sampler_overhead.py --library build/dev/lib/libtorchscope_collector.so \
        [--repetitions 7] [--steps 1500] [--hz 100] [--workload mlp|python] [--scalene]

`--workload python`: pure Python that holds the GIL (workloads.pure_python_loop) in place of the MLP loop, where a
sampler that takes the GIL costs the job's thread a forced switch per tick. TORCHSCOPE_SAMPLE_READER in the
environment chooses the sampler's reader (docs/collector.md, *Stack sampler*); the sampler's CPU per tick is its
thread's CPU over the loop against the samples of the loop's steps in the store. TORCHSCOPE_SAMPLE_BUDGET in the
environment sets the sampler's budget (0.5 % of a core by default, which spreads the ticks of a machine where they cost
more: the rate asked is then not the rate run); 0 measures --hz as asked, whatever a tick costs.
"""

import argparse
import importlib.util
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time

from paired import interleaved, last_json, paired_ratios, run_child, spread
from workloads import eager_mlp_loop, pure_python_loop, thread_cpu


def worker(steps, profile, workload):
    train = eager_mlp_loop() if workload == "mlp" else pure_python_loop()
    start = time.process_time()
    start_sampler = thread_cpu()["torchscope-smp"]
    if profile:
        import torch

        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
            train(steps)
    else:
        train(steps)
    sampler_cpu = thread_cpu()["torchscope-smp"] - start_sampler
    print(json.dumps({"loop_cpu": time.process_time() - start, "sampler_cpu": sampler_cpu}))


def run_once(variant, args, store_dir):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    command = [sys.executable, os.path.abspath(__file__), "--worker", "--steps", str(args.steps), "--workload",
               args.workload]
    if variant in ("collector", "sampler"):
        env["LD_PRELOAD"] = args.library
        env["TORCHSCOPE_OUTPUT"] = os.path.join(store_dir, f"{variant}.db")
        env["TORCHSCOPE_SUMMARY"] = "0"
        env["TORCHSCOPE_SAMPLE_HZ"] = "0" if variant == "collector" else str(args.hz)
    elif variant == "torch.profiler":
        command.append("--profile")
    elif variant == "scalene":
        command = [sys.executable, "-m", "scalene", "run", "--cpu-only", "-o",
                   os.path.join(store_dir, "scalene.json"), os.path.abspath(__file__), "---", "--worker", "--steps",
                   str(args.steps), "--workload", args.workload]
    out, tree = run_child(command, env)
    last = last_json(out)
    return {"tree": tree, "loop": last.get("loop_cpu", float("nan")), "sampler": last.get("sampler_cpu", 0),
            "ticks": ticks_of(env.get("TORCHSCOPE_OUTPUT"))}


def ticks_of(store):
    """The sampler's ticks over the loop's steps: the step samples of the thread sampled most (the loop's)."""
    if not store or not os.path.exists(store):
        return 0
    with sqlite3.connect(store) as db:
        row = db.execute("SELECT max(n) FROM (SELECT sum(samples) AS n FROM stack_samples WHERE step >= 0 GROUP BY tid)").fetchone()
    os.remove(store)
    return row[0] or 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", help="libtorchscope_collector.so")
    parser.add_argument("--repetitions", type=int, default=7, help="paired runs per variant")
    parser.add_argument("--steps", type=int, default=1500, help="training steps per run")
    parser.add_argument("--hz", type=int, default=100, help="the sampler's rate (TORCHSCOPE_SAMPLE_HZ)")
    parser.add_argument("--workload", choices=("mlp", "python"), default="mlp",
                        help="the eager MLP training loop, or pure Python that holds the GIL (about 1 ms a step)")
    parser.add_argument("--scalene", action="store_true", help="also run the loop under Scalene (--cpu-only)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.steps, args.profile, args.workload)
        return
    if not args.library or not os.path.exists(args.library):
        parser.error("--library must name the built libtorchscope_collector.so")
    args.library = os.path.abspath(args.library)
    variants = ["plain", "collector", "sampler", "torch.profiler"]
    if args.scalene:
        if importlib.util.find_spec("scalene") is None:
            parser.error("--scalene: scalene is not installed (pip install -r bench/requirements.txt)")
        variants.append("scalene")
    with tempfile.TemporaryDirectory() as store_dir:
        results = interleaved(variants, args.repetitions, lambda variant: run_once(variant, args, store_dir))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, python "
          f"{platform.python_version()}; {args.repetitions} interleaved runs per variant, {args.steps} steps "
          f"each ({args.workload}), sampler at {args.hz} Hz, reader {os.environ.get('TORCHSCOPE_SAMPLE_READER', 'direct')}")
    plain = results["plain"]
    for variant in variants:
        runs = results[variant]
        line = (f"{variant:15} tree CPU {statistics.median(r['tree'] for r in runs):7.2f} s  "
                f"loop CPU {statistics.median(r['loop'] for r in runs):7.2f} s")
        if variant == "sampler":
            own, low, high = spread(r["sampler"] / r["loop"] for r in runs)
            line += f"  sampler thread {own * 100:.2f} % of the loop's CPU [{low * 100:.2f}, {high * 100:.2f}]"
            per_tick, low, high = spread(r["sampler"] / r["ticks"] for r in runs if r["ticks"] > 0)
            line += f", {per_tick * 1e6:.1f} us per tick of the loop [{low * 1e6:.1f}, {high * 1e6:.1f}]"
        if variant != "plain":
            for key in ("tree", "loop"):
                ratio, low, high = spread(paired_ratios(runs, plain, key))
                line += f"  {key} {ratio:.3f}x [{low:.3f}, {high:.3f}]"
        print(line)


if __name__ == "__main__":
    main()
