#!/usr/bin/env python3
"""Memory tools side by side on the same leaking CPU job (leaky_job.py), and the cost of torchscope's memory capture.

One interleaved run: every repetition runs each tool once, in an order that rotates between repetitions, so that
drifts of the machine hit all tools alike. For each run it measures the CPU time (user + system) of the whole process
tree and its wall time; the table gives, per tool, the median ratio to the plain job of the same repetition, with the
range. It also checks whether each tool names the line that keeps the memory (MARK:leak in leaky_job.py):

- plain: the job alone;
- torchscope: `torchscope run` with memory capture (the default), then `torchscope advise --format json`: the
  `memory/growth` finding's line;
- torchscope (memory off): `TORCHSCOPE_MEMORY=0`, the collector without memory capture, to isolate what memory
  capture costs;
- torch.profiler: `profile_memory=True, with_stack=True`, the user line of the entry with the most self CPU memory;
- scalene: `scalene run -o profile.json` (CPU and memory profiling, its defaults), the line it ranks first as a
  leak (else the line with the most memory growth). Scalene comes from bench/memory/requirements.txt, installed here into build/bench-packages (not into the
  project's virtual environment).

    .venv/bin/python bench/memory/memory_bench.py --torchscope build/dev/bin/torchscope [--repetitions 3] [--steps 100]
"""

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
JOB = os.path.join(HERE, "leaky_job.py")
PACKAGES = os.path.join(ROOT, "build", "bench-packages")


def leak_line():
    with open(JOB, encoding="utf-8") as source:
        return next(number for number, line in enumerate(source, 1) if line.rstrip().endswith("# MARK:leak"))


def install_scalene():
    """Scalene goes into build/bench-packages, on PYTHONPATH only for its own runs."""
    if os.path.isdir(os.path.join(PACKAGES, "scalene")):
        return True
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", PACKAGES, "-r",
                           os.path.join(HERE, "requirements.txt")], check=False)
    return done.returncode == 0


def timed(argv, env=None, timeout=None):
    """Runs argv; returns (wall seconds, CPU seconds of the process tree, stdout). Raises
    subprocess.TimeoutExpired after `timeout` seconds (the process is killed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=timeout)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def tagged(stdout, tag):
    for line in stdout.splitlines():
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1:])
    return {}


def clean_env(**extra):
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCHSCOPE_")}
    env.pop("LD_PRELOAD", None)
    env.update(extra)
    return env


class Tools:
    def __init__(self, torchscope, steps, scratch, scalene_timeout):
        self.torchscope = torchscope
        self.steps = str(steps)
        self.scalene_timeout = scalene_timeout
        self.scratch = scratch
        self.count = 0

    def _path(self, suffix):
        self.count += 1
        return os.path.join(self.scratch, f"run{self.count}{suffix}")

    def plain(self):
        wall, cpu, out = timed([sys.executable, JOB, self.steps], clean_env())
        return wall, cpu, out, None

    def _torchscope(self, memory):
        store = self._path(".db")
        env = clean_env(TORCHSCOPE_MEMORY="1" if memory else "0")
        wall, cpu, out = timed([self.torchscope, "run", "--no-summary", "-o", store, "--", sys.executable, JOB,
                                self.steps], env)
        line = None
        if memory:
            advice = subprocess.run([self.torchscope, "advise", store, "--format", "json"], capture_output=True,
                                    text=True, check=True).stdout
            growth = [f for f in json.loads(advice)["findings"] if f["rule"] == "memory/growth"]
            line = growth[0]["location"]["line"] if growth else None
        return wall, cpu, out, line

    def torchscope_memory(self):
        return self._torchscope(True)

    def torchscope_without_memory(self):
        return self._torchscope(False)

    def torch_profiler(self):
        wall, cpu, out = timed([sys.executable, os.path.join(HERE, "profile_with_torch_profiler.py"), self.steps],
                               clean_env())
        named = tagged(out, "bench-named")
        # No line: the op it charges the memory to is what the user gets.
        return wall, cpu, out, named.get("line") or f"no line, top op {named.get('op')}"

    def scalene(self):
        report = self._path(".json")
        env = clean_env(PYTHONPATH=PACKAGES)
        try:
            wall, cpu, out = timed([sys.executable, "-m", "scalene", "run", "-o", report, JOB, "---", self.steps], env,
                                   timeout=self.scalene_timeout)
        except subprocess.TimeoutExpired:
            return None, None, "", None  # did not finish in time
        return wall, cpu, out, scalene_line(report)


def scalene_line(report):
    """The job's line Scalene ranks first as a leak, else the one with the most memory growth."""
    try:
        with open(report, encoding="utf-8") as handle:
            profile = json.load(handle)
    except (OSError, ValueError):
        return None
    for path, data in profile.get("files", {}).items():
        if os.path.abspath(path) != JOB:
            continue
        leaks = data.get("leaks", {})
        if leaks:
            return int(max(leaks.items(), key=lambda item: item[1].get("likelihood", 0))[0])
        lines = data.get("lines", [])
        if lines:
            return max(lines, key=lambda line: line.get("n_growth_mb", 0)).get("lineno")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torchscope", required=True, help="build/<dir>/bin/torchscope")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--no-scalene", action="store_true", help="leave Scalene out (it is the slowest by far)")
    parser.add_argument("--scalene-timeout", type=float, default=900, help="seconds before a Scalene run is stopped")
    args = parser.parse_args()

    names = ["plain", "torchscope", "torchscope (memory off)", "torch.profiler"]
    with_scalene = not args.no_scalene and install_scalene()
    if with_scalene:
        names.append("scalene")
    runs = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="torchscope-memory-bench-") as scratch:
        tools = Tools(os.path.abspath(args.torchscope), args.steps, scratch, args.scalene_timeout)
        run_of = {"plain": tools.plain, "torchscope": tools.torchscope_memory,
                  "torchscope (memory off)": tools.torchscope_without_memory, "torch.profiler": tools.torch_profiler,
                  "scalene": tools.scalene}
        for repetition in range(args.repetitions):
            shift = repetition % len(names)
            for name in names[shift:] + names[:shift]:
                wall, cpu, out, line = run_of[name]()
                runs[name].append({"wall": wall, "cpu": cpu, "line": line,
                                   "step": tagged(out, "bench-steps").get("median_step_s")})
                print(f"[{repetition + 1}/{args.repetitions}] {name}: wall {wall} s, CPU {cpu} s, line {line}",
                      file=sys.stderr)

    expected = leak_line()
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; {args.repetitions} interleaved repetitions, {args.steps} steps; the leak is "
          f"at leaky_job.py:{expected}\n")
    print("| tool | CPU time vs plain (median, range) | wall vs plain (median) | step time vs plain (median) | "
          "line named | right line |")
    print("|---|---|---|---|---|---|")
    for name in names:
        pairs = [(run, base) for run, base in zip(runs[name], runs["plain"]) if run["cpu"] is not None]
        unfinished = len(runs[name]) - len(pairs)
        lines = sorted({run["line"] for run, _ in pairs}, key=str)
        named = "-" if name in ("plain", "torchscope (memory off)") else ", ".join(str(line) for line in lines)
        right = "-" if named == "-" else ("yes" if lines == [expected] else "no")
        if not pairs:
            print(f"| {name} | did not finish in {args.scalene_timeout:.0f} s ({unfinished} runs) | - | - | - | - |")
            continue
        cpu = [run["cpu"] / base["cpu"] for run, base in pairs]
        wall = [run["wall"] / base["wall"] for run, base in pairs]
        steps = [run["step"] / base["step"] for run, base in pairs if run["step"] and base["step"]]
        step_text = f"{statistics.median(steps):.3f}x" if steps else "-"
        note = f" ({unfinished} runs did not finish)" if unfinished else ""
        print(f"| {name} | {statistics.median(cpu):.2f}x ({min(cpu):.2f}..{max(cpu):.2f}){note} | "
              f"{statistics.median(wall):.2f}x | {step_text} | {named} | {right} |")


if __name__ == "__main__":
    main()
