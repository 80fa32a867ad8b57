#!/usr/bin/env python3
"""CPU cost per call of timing a compiled region (collector/python/torchscope_bridge/regions.py).

Calls a function through the bridge's region wrapper and directly, alternating, and reports the calling
thread's CPU time per call (median and range over repetitions) and the difference: what each call of a
`torch.compile` result pays for the region table. With torch installed, the wrapper asks torch's real
"is Dynamo tracing this" check, as in a job.

    .venv/bin/python bench/regions_overhead.py [--calls 200000] [--repetitions 9]
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "collector", "python"))

from torchscope_bridge import regions, tracing  # noqa: E402


class _Entry:
    site = None


def _cpu_per_call(function, calls):
    start = time.thread_time_ns()
    for _ in range(calls):
        function(1)
    return (time.thread_time_ns() - start) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--repetitions", type=int, default=9)
    args = parser.parse_args()
    try:
        import torch

        traced = tracing.dynamo_checker(torch)
    except ImportError:
        traced = tracing.not_traced
    rows = []
    table = regions.Regions(lambda kind, fields: rows.append(fields), traced)

    def plain(x):
        return x

    timed = table.timed(plain, _Entry(), "plain")
    pairs = []
    for _ in range(args.repetitions):
        pairs.append((_cpu_per_call(plain, args.calls), _cpu_per_call(timed, args.calls)))
    added = [with_region - without for without, with_region in pairs]
    print(f"direct call: {statistics.median(p for p, _ in pairs):.0f} ns CPU per call")
    print(f"timed call:  {statistics.median(t for _, t in pairs):.0f} ns CPU per call")
    print(f"added:       {statistics.median(added):.0f} ns per call (range {min(added):.0f}..{max(added):.0f}, "
          f"{args.repetitions} x {args.calls} calls, torch's trace check: {traced is not tracing.not_traced})")


if __name__ == "__main__":
    main()
