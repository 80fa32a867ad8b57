#!/usr/bin/env python3
"""What the collector costs an eager CPU training job, to within 1 %: its per-step work measured inside one process.

Fresh processes of the same loop differ by several per cent in CPU time on a shared machine, far more than the 1 %
to show. So the cost is measured in two parts:

* **Window-gated (A/B in one process).** The job runs under the collector with TORCHSCOPE_WINDOW_SIGNAL=1: the
  capture window starts closed and each SIGUSR2 toggles it. The eager MLP loop of bench/workloads.py
  (256-512-512-10, batch 64, SGD, one intra-op thread) runs blocks of --block-steps steps in ABBA order (closed,
  open, open, closed, ...), each block's process CPU per step (time.process_time: every thread) and wall time per
  step read on its own (a job's thread that waits for the GIL a sampler tick holds is asleep: wall, not CPU).
  Each ABBA group gives one ratio (the two open blocks over the two closed ones: a linear drift of the machine
  cancels). The figure is the median ratio over every group of --processes processes, with a 95 % bootstrap
  interval of that median. Per block the CPU of each thread is read too (/proc/self/task/*/schedstat): the job's
  thread, the store's writer (torchscope-wr), the host-memory sampler (torchscope-mem), the stack sampler
  (torchscope-smp), the rest. This is what the collector does only while the window is open: the step row, the
  host RSS at the step end and its peak, the bridge's memory hook (leak evidence every 64th step), the writer's
  inserts, the host-memory sampler's reads and, with --hz, the stack sampler's ticks. Before the measured blocks the
  window is open for --prime-steps steps, so that the one-off op census (one step, docs/collector.md) is not in them.
* **Constant, the job's side (A/B in one process).** Then, the window closed, blocks run in ABBA order with the
  bridge's per-step hooks taken out of torch (the optimizer's step post-hook, and the zero_grad() and backward()
  wrappers while the bridge keeps them: what a step runs of the collector while nothing is recorded) and put back: the job's thread's cost
  of a closed window, which fresh processes cannot resolve. The side threads' closed-window cost is in each
  variant's "per closed step, by thread".
* **Constant (across processes).** What the collector costs with its window closed: the library and bridge loaded,
  the step hooks' checks and the record call that drops the step, the side threads waking up. Measured as paired
  runs of fresh processes (plain, collector with a closed window), interleaved (bench/paired.py): the loop's CPU
  (time.process_time) and the whole process tree's (import and exit included), paired ratios with the median and a
  bootstrap interval. This machine's run-to-run noise bounds its precision; the interval says how well.

The whole collector's cost on this job is about the product of the window-gated ratio and the hooks' ratio, plus
the side threads' closed-window CPU. The stack sampler runs under its budget (TORCHSCOPE_SAMPLE_BUDGET in the
environment, 0.5 % of a core by default: --hz is the rate asked, which a machine of costly ticks runs slower).

    .venv/bin/python bench/collector_window_ab.py --library build/dev/lib/libtorchscope_collector.so \
        [--processes 4] [--blocks 40] [--block-steps 50] [--hz 0,100] [--repetitions 6] [--baseline-library LIB] \
        [--model bench|large|request]

Each variant ends with the whole collector against none on the job: the window-gated ratio times the hooks' ratio
(their intervals' ends multiplied: a wider interval than either).
"""

import argparse
import ctypes
import json
import os
import platform
import random
import signal
import statistics
import sys
import tempfile
import time

from paired import interleaved, last_json, run_child
from workloads import INFERENCE_MODELS, MLP_SIZES, THREAD_GROUPS, job_loop, thread_cpu

def set_window(library, want_open):
    """Toggles the capture window until the collector says it is `want_open` (its thread reads the signal)."""
    if (library.torchscope_window_open() == 1) == want_open:
        return
    os.kill(os.getpid(), signal.SIGUSR2)
    deadline = time.monotonic() + 5
    while (library.torchscope_window_open() == 1) != want_open:
        if time.monotonic() > deadline:
            raise RuntimeError("the capture window did not toggle: is TORCHSCOPE_WINDOW_SIGNAL=1 set?")
        time.sleep(0.001)


def bridge_step_hooks():
    """(take_out, put_back): remove the bridge's per-step hooks from torch (the optimizer's step post-hook, and the
    zero_grad() and backward() wrappers while they are in: the bridge takes them out itself once an optimizer has
    stepped) and restore them as they were, so that a block can run as if no collector were there. Called after the
    job's first steps, the hooks are those its steady steps pay for."""
    import torch
    from torch.optim import optimizer as optimizer_module

    hooks = sys.modules["torchscope_bridge.hooks"]
    optimizer_class = optimizer_module.Optimizer
    installed_backward, installed_zero_grad = torch.Tensor.backward, optimizer_class.zero_grad
    wrappers = getattr(hooks, "_marking_wrappers", None)  # (owner, attribute, wrapper, original) by name
    if wrappers is not None:
        original_backward, original_zero_grad = wrappers["backward"][3], wrappers["zero_grad"][3]
    else:  # a bridge that keeps its wrappers in
        original_backward, original_zero_grad = installed_backward.__wrapped__, installed_zero_grad.__wrapped__
    post_hooks = optimizer_module._global_optimizer_post_hooks
    key = next(key for key, hook in post_hooks.items() if hook is hooks._on_optimizer_step)

    def take_out():
        torch.Tensor.backward, optimizer_class.zero_grad = original_backward, original_zero_grad
        post_hooks.pop(key, None)

    def put_back():
        torch.Tensor.backward, optimizer_class.zero_grad = installed_backward, installed_zero_grad
        post_hooks[key] = hooks._on_optimizer_step

    return take_out, put_back


def bridge_request_hooks():
    """(take_out, put_back) as bridge_step_hooks, for an inference job: the forward pre-hook and forward hook the
    bridge put on the module whose calls are the requests."""
    requests = sys.modules["torchscope_bridge.hooks"]._requests
    module = requests._module
    if module is None:
        raise RuntimeError("the bridge marks no module's calls as requests")
    installed = {name: dict(getattr(module, name)) for name in
                 ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks")}

    def take_out():
        for name in installed:
            getattr(module, name).clear()

    def put_back():
        for name, hooks in installed.items():
            getattr(module, name).update(hooks)

    return take_out, put_back


def measured_block(train, per_block):
    threads, start, wall_start = thread_cpu(), time.process_time(), time.perf_counter()
    train(per_block)
    wall = time.perf_counter() - wall_start
    cpu = time.process_time() - start
    after = thread_cpu()
    return {"cpu": cpu / per_block, "wall": wall / per_block,
            "threads": {group: (after[group] - threads[group]) / per_block for group in THREAD_GROUPS}}


def ab_worker(blocks, per_block, prime_steps, model):
    train = job_loop(model)
    library = ctypes.CDLL(None)
    library.torchscope_window_open.restype = ctypes.c_int
    train(50)  # warm-up, window closed
    set_window(library, True)
    train(prime_steps)  # the op census's step, once per process
    set_window(library, False)
    train(50)
    gated = []
    for block in range(blocks):
        want_open = (block % 4) in (1, 2)  # ABBA: a linear drift hits both sides alike
        set_window(library, want_open)
        time.sleep(0.01)  # the side threads see the new state
        gated.append({"open": want_open, **measured_block(train, per_block)})
    # The constant part on the job's thread: the window closed, the bridge's hooks in ("open" here) or out.
    set_window(library, False)
    take_out, put_back = bridge_request_hooks() if model in INFERENCE_MODELS else bridge_step_hooks()
    hooked = []
    for block in range(blocks):
        hooks_in = (block % 4) in (1, 2)
        (put_back if hooks_in else take_out)()
        hooked.append({"open": hooks_in, **measured_block(train, per_block)})
    put_back()
    print(json.dumps({"blocks": gated, "hooks": hooked}))


def steady_worker(steps, model):
    train = job_loop(model)
    train(50)
    start = time.process_time()
    train(steps)
    print(json.dumps({"loop_cpu": time.process_time() - start}))


def bootstrap_median(values, resamples=2000, seed=1):
    """(median, low, high): the median and the 2.5 and 97.5 percentiles of the medians of resampled values."""
    rng = random.Random(seed)
    values = list(values)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples))
    return statistics.median(values), medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def abba_groups(blocks):
    """[(open blocks, closed blocks)] of each whole ABBA group of four blocks."""
    groups = []
    for first in range(0, len(blocks) - 3, 4):
        group = blocks[first:first + 4]
        groups.append(([b for b in group if b["open"]], [b for b in group if not b["open"]]))
    return groups


def collector_env(args, store, hz, window_signal=True):
    env = dict(os.environ)
    env["LD_PRELOAD"] = args.library
    env["TORCHSCOPE_OUTPUT"] = store
    env["TORCHSCOPE_SUMMARY"] = "0"
    env["TORCHSCOPE_SAMPLE_HZ"] = str(hz)
    if window_signal:
        env["TORCHSCOPE_WINDOW_SIGNAL"] = "1"
    return env


def window_part(args, store_dir):
    """{(library, hz): [ABBA groups of every process]}, the processes of every library and rate interleaved."""
    variants = [(library, hz) for library in args.libraries for hz in args.hz]
    groups = {variant: [] for variant in variants}
    hook_groups = {variant: [] for variant in variants}

    def run(variant):
        library, hz = variant
        command = [sys.executable, os.path.abspath(__file__), "--ab-worker", "--blocks", str(args.blocks),
                   "--block-steps", str(args.block_steps), "--prime-steps", str(args.prime_steps), "--model", args.model]
        env = collector_env(args, os.path.join(store_dir, f"ab{hz}.db"), hz)
        env["LD_PRELOAD"] = library
        out, _ = run_child(command, env)
        result = last_json(out)
        groups[variant].extend(abba_groups(result["blocks"]))
        hook_groups[variant].extend(abba_groups(result["hooks"]))

    interleaved(variants, args.processes, run)
    return groups, hook_groups


def sum_cpu(blocks, group=None):
    return sum(b["cpu"] if group is None else b["threads"][group] for b in blocks)


def sum_wall(blocks):
    return sum(b["wall"] for b in blocks)


def report_hooks(groups, gated):
    """The bridge's step hooks with the window closed against none, on the job's thread and in wall time; then the
    whole collector, with `gated` (the window-gated ratio, low, high)."""
    ratio, low, high = bootstrap_median([sum_cpu(hooked) / sum_cpu(bare) for hooked, bare in groups])
    wall, wall_low, wall_high = bootstrap_median([sum_wall(hooked) / sum_wall(bare) for hooked, bare in groups])
    added, added_low, added_high = bootstrap_median(
        [(sum_cpu(hooked, "job") - sum_cpu(bare, "job")) / 2 for hooked, bare in groups])
    print(f"      constant, the bridge's step hooks (window closed) against none: CPU {ratio:.4f} [{low:.4f}, "
          f"{high:.4f}], wall {wall:.4f} [{wall_low:.4f}, {wall_high:.4f}], job's thread {added * 1e6:+.1f} us "
          f"[{added_low * 1e6:+.1f}, {added_high * 1e6:+.1f}] a step ({len(groups)} ABBA groups)")
    print(f"      the whole collector against none (window-gated x hooks): CPU {gated[0] * ratio:.4f} "
          f"[{gated[1] * low:.4f}, {gated[2] * high:.4f}]")


def report_window(library, hz, groups):
    """Prints the window-gated part; returns its (ratio, low, high)."""
    ratios = [sum_cpu(opened) / sum_cpu(closed) for opened, closed in groups]
    gated = bootstrap_median(ratios)
    ratio, low, high = gated
    closed_step = statistics.median(sum_cpu(closed) / 2 for _, closed in groups)
    quartiles = statistics.quantiles(ratios, n=4)
    print(f"{library}\n  window-gated, sampler {'off' if hz == 0 else f'at {hz} Hz'}: open/closed {ratio:.4f} "
          f"[{low:.4f}, {high:.4f}] (95 % bootstrap of the median over {len(ratios)} ABBA groups; quartiles "
          f"{quartiles[0]:.4f}/{quartiles[1]:.4f}/{quartiles[2]:.4f}), closed step {closed_step * 1e3:.3f} ms CPU")
    # The job's thread waiting for the GIL a sampler tick holds is asleep: it costs wall time, not CPU.
    wall, wall_low, wall_high = bootstrap_median([sum_wall(opened) / sum_wall(closed) for opened, closed in groups])
    print(f"      wall time per step open/closed {wall:.4f} [{wall_low:.4f}, {wall_high:.4f}], closed step "
          f"{statistics.median(sum_wall(closed) / 2 for _, closed in groups) * 1e3:.3f} ms")
    parts = []
    for group in THREAD_GROUPS:
        added = [(sum_cpu(opened, group) - sum_cpu(closed, group)) / 2 for opened, closed in groups]
        median, low, high = bootstrap_median(added)
        parts.append(f"{group} {median * 1e6:+.1f} us [{low * 1e6:+.1f}, {high * 1e6:+.1f}]")
    print("      per open step, by thread: " + ", ".join(parts))
    closed = [f"{group} {statistics.median(sum_cpu(blocks, group) / 2 for _, blocks in groups) * 1e6:.1f} us"
              for group in THREAD_GROUPS]
    print("      per closed step, by thread: " + ", ".join(closed))
    return gated


def constant_part(args, store_dir):
    steps = args.blocks * args.block_steps

    def run(variant):
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        if variant == "closed":
            env = collector_env(args, os.path.join(store_dir, "closed.db"), 0)
        command = [sys.executable, os.path.abspath(__file__), "--steady-worker", "--steps", str(steps), "--model",
                   args.model]
        out, tree = run_child(command, env)
        return {"tree": tree, "loop": last_json(out)["loop_cpu"]}

    results = interleaved(["plain", "closed"], args.repetitions, run)
    plain, closed = results["plain"], results["closed"]
    lines = [f"constant (collector loaded, window closed, sampler off) against no collector, {args.repetitions} paired "
          f"runs of {steps} steps:"]
    for key, what in (("loop", "loop CPU"), ("tree", "process tree CPU")):
        ratios = [run[key] / base[key] for run, base in zip(closed, plain)]
        ratio, low, high = bootstrap_median(ratios)
        lines.append(f"    {what}: plain {statistics.median(r[key] for r in plain):.3f} s (runs "
              f"{min(r[key] for r in plain):.3f}..{max(r[key] for r in plain):.3f}), ratio {ratio:.4f} "
              f"[{low:.4f}, {high:.4f}] (paired ratios {min(ratios):.4f}..{max(ratios):.4f})")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", help="libtorchscope_collector.so")
    parser.add_argument("--processes", type=int, default=4, help="A/B processes per sampler rate")
    parser.add_argument("--blocks", type=int, default=40, help="blocks per A/B process (groups of four: ABBA)")
    parser.add_argument("--block-steps", type=int, default=50, help="training steps per block")
    parser.add_argument("--prime-steps", type=int, default=10, help="steps with the window open before the blocks")
    parser.add_argument("--baseline-library", help="a second library (e.g. before a change) whose A/B processes "
                        "run interleaved with --library's")
    parser.add_argument("--hz", default="0,100", help="the stack sampler's rates to measure (0: off), comma-separated")
    parser.add_argument("--repetitions", type=int, default=6, help="paired runs for the constant part (0: skip it)")
    parser.add_argument("--ab-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--steady-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--model", choices=sorted(MLP_SIZES), default="bench",
                        help="the job: the bench's MLP, one with steps about eight times longer, or an inference "
                        "job of 2 ms requests (each block's steps are then requests, the hooks the request hooks)")
    args = parser.parse_args()
    if args.ab_worker:
        ab_worker(args.blocks, args.block_steps, args.prime_steps, args.model)
        return
    if args.steady_worker:
        steady_worker(args.steps, args.model)
        return
    if not args.library or not os.path.exists(args.library):
        parser.error("--library must name the built libtorchscope_collector.so")
    if args.blocks < 8:
        parser.error("--blocks must be at least 8 (two ABBA groups: the spread needs two ratios)")
    args.library = os.path.abspath(args.library)
    args.libraries = [args.library]
    if args.baseline_library:
        args.libraries.append(os.path.abspath(args.baseline_library))
    args.hz = [int(hz) for hz in args.hz.split(",") if hz.strip()]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as store_dir:
        groups, hook_groups = window_part(args, store_dir)
        constant = constant_part(args, store_dir) if args.repetitions > 0 else []
    load_after = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {load_before[0]:.2f} at the start, "
          f"{load_after[0]:.2f} at the end (1-minute averages), python {platform.python_version()}; "
          f"{args.processes} A/B processes per rate x {args.blocks} blocks of {args.block_steps} steps of the "
          f"{args.model} MLP")
    for library, hz in groups:
        gated = report_window(library, hz, groups[(library, hz)])
        report_hooks(hook_groups[(library, hz)], gated)
    print("\n".join(constant))


if __name__ == "__main__":
    main()
