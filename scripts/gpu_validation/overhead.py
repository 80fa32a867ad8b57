"""Measures the median step time of train_gpu.py with no tracer, under the collector and under
torch.profiler, interleaved in one invocation, and writes overhead.json and overhead.md (the
table for docs/performance.md)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ("none", "collector", "torch.profiler")


def run_once(mode, args, scratch, repetition):
    out = os.path.join(scratch, f"{mode}-{repetition}.json")
    command = [args.python, os.path.join(HERE, "train_gpu.py"), "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--out", out]
    env = dict(os.environ)
    if mode == "collector":
        env["LD_PRELOAD"] = args.collector
        env["TORCHSCOPE_OUTPUT"] = os.path.join(scratch, f"collector-{repetition}", "run.db")
        os.makedirs(os.path.dirname(env["TORCHSCOPE_OUTPUT"]), exist_ok=True)
    elif mode == "torch.profiler":
        command += ["--profile", os.path.join(scratch, f"profiler-{repetition}.trace.json")]
    subprocess.run(command, env=env, check=True)
    with open(out) as f:
        return json.load(f)["median_step_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collector", required=True, help="path of libtorchscope_collector.so")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--out", required=True, help="directory for overhead.json and overhead.md")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    medians = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as scratch:
        for repetition in range(args.repetitions):
            # Rotate the order so that drift (clocks, temperature) does not favour one mode.
            order = MODES[repetition % 3:] + MODES[:repetition % 3]
            for mode in order:
                medians[mode].append(run_once(mode, args, scratch, repetition))

    baseline = statistics.median(medians["none"])
    rows = []
    for mode in MODES:
        median = statistics.median(medians[mode])
        rows.append({"mode": mode, "median_step_ms": median, "min_ms": min(medians[mode]),
                     "max_ms": max(medians[mode]), "overhead_percent": 100.0 * (median - baseline) / baseline,
                     "run_medians_ms": medians[mode]})
    with open(os.path.join(args.out, "overhead.json"), "w") as f:
        json.dump({"repetitions": args.repetitions, "steps": args.steps, "rows": rows}, f, indent=2)
    lines = ["| mode | median step (ms) | run medians min-max (ms) | vs none |", "|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['mode']} | {row['median_step_ms']:.3f} | {row['min_ms']:.3f}-{row['max_ms']:.3f} | "
                     f"{row['overhead_percent']:+.2f} % |")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "overhead.md"), "w") as f:
        f.write(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
