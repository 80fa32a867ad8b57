#!/usr/bin/env python3
"""Fresh-build cost of what the demo compiles (the core command and the collector), unity batches on and off.

Each repetition configures a new build folder with the dev preset and builds the demo's targets with the compiler
cache off, alternating the variants so that both meet the same machine load. Reported per variant: CPU time of the
build's process tree (user + system, the figure to trust on a shared machine), wall time, and the number of compile
steps. Usage: bench/build_time.py [--repetitions N] [--work DIR] [--json OUT]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["torchscope_core", "torchscope_collector"]
VARIANTS = {"unity": "ON", "one file a unit": "OFF"}


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build_once(work: Path, unity: str) -> dict:
    build = work / f"build-unity-{unity}"
    shutil.rmtree(build, ignore_errors=True)
    env = dict(os.environ, CCACHE_DISABLE="1")
    env.pop("CMAKE_CXX_COMPILER_LAUNCHER", None)
    env.pop("CMAKE_C_COMPILER_LAUNCHER", None)
    subprocess.run(["cmake", "--preset", "dev", "-B", str(build), f"-DTORCHSCOPE_UNITY_BUILD={unity}"],
                   cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    cpu_before, wall_before = children_cpu_seconds(), time.monotonic()
    jobs = str(os.cpu_count() or 2)
    subprocess.run(["cmake", "--build", str(build), "-j", jobs, "--target", *TARGETS],
                   cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    result = {"cpu_s": children_cpu_seconds() - cpu_before, "wall_s": time.monotonic() - wall_before}
    log = (build / ".ninja_log").read_text().splitlines()[1:]
    result["steps"] = sum(1 for line in log if line.split("\t")[3].endswith(".o"))
    shutil.rmtree(build, ignore_errors=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=2)
    parser.add_argument("--work", type=Path, default=Path("/tmp/torchscope-build-time"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    runs = {name: [] for name in VARIANTS}
    for repetition in range(args.repetitions):
        for name, unity in VARIANTS.items():
            result = build_once(args.work, unity)
            runs[name].append(result)
            print(f"{repetition + 1}/{args.repetitions} {name}: {result['cpu_s']:.0f} CPU-s, {result['wall_s']:.0f} s wall,"
                  f" {result['steps']} compile steps", flush=True)
    baseline = statistics.median(r["cpu_s"] for r in runs["one file a unit"])
    for name, results in runs.items():
        cpu = statistics.median(r["cpu_s"] for r in results)
        wall = statistics.median(r["wall_s"] for r in results)
        print(f"{name}: median {cpu:.0f} CPU-s ({cpu / baseline:.2f}x of one file a unit), {wall:.0f} s wall, "
              f"CPU range {min(r['cpu_s'] for r in results):.0f}-{max(r['cpu_s'] for r in results):.0f}")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
