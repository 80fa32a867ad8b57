#!/usr/bin/env python3
"""Runs the fuzz targets for a stated budget of CPU time each, then keeps what they found.

Each target runs in a session of its own, fed from its regression corpus in the repository; it is
stopped (SIGINT, so libFuzzer prints its final figures) once its process tree has used the CPU budget:
the user + system time of the fuzzer and of the children it reaped (`-fork` workers). A budget in
CPU time, not wall time, means the same campaign on a loaded or a quiet machine. Afterwards the
inputs that reach new coverage are merged into the repository corpus (`-merge=1 -use_counters=0`,
as docs/reliability.md describes), and every crash, leak, timeout or OOM input is listed: each must
become a regression file in the corpus once fixed.

A campaign survives its own end: OUT/progress.json holds the CPU time each target has used, rewritten
every poll, and the fuzzers die with this script (SIGINT from the kernel). Running the same command
again with the same OUT resumes: each unfinished target continues from its working corpus with what is
left of its budget, its log gains a new segment, and the figures add up over the segments.

    python3 scripts/fuzz_campaign.py --cpu-seconds 3600 --out /tmp/campaign      # all four targets
    python3 scripts/fuzz_campaign.py --cpu-seconds 600 fuzz_kineto store_reader_fuzz
    python3 scripts/fuzz_campaign.py --background ...    # on a shared machine: only its idle CPU

Prints one JSON line per target (also written to OUT/results.jsonl). Build the targets first:
`bash scripts/sanitize.sh asan` (or `cmake --preset asan && cmake --build build/asan --target ...`).
"""

import argparse
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = os.sysconf("SC_CLK_TCK")
PR_SET_PDEATHSIG = 1

# target -> (binary under the build folder, corpus folders (the first one receives the merge), options)
TARGETS = {
    "fuzz_torch_trace": ("interop/fuzz/fuzz_torch_trace", ["interop/fuzz/corpus/torch_trace"],
                         ["-max_len=8192"]),
    "fuzz_kineto": ("interop/fuzz/fuzz_kineto", ["interop/fuzz/corpus/kineto"], ["-max_len=8192"]),
    "cupti_buffer_fuzz": ("collector/cupti/fuzz/cupti_buffer_fuzz", ["collector/cupti/fuzz/corpus"],
                          ["-max_len=4096"]),
    # Each input is analysed and rendered in six formats: a crash must not end the campaign.
    "store_reader_fuzz": ("analyzer/fuzz/store_reader_fuzz", ["analyzer/fuzz/corpus"],
                          ["-max_len=98304", "-fork=1", "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1"]),
}
SEEDS = {"fuzz_torch_trace": "interop/fuzz/seeds/torch_trace", "fuzz_kineto": "interop/fuzz/seeds/kineto"}
FINDINGS = re.compile(r"^(crash|leak|timeout|oom|slow-unit)-")
# "#5646016  REDUCE cov: 2634 ft: 15242 ..." and, under -fork, "#300263: cov: 54355 ft: 53843 ..."
STATUS = re.compile(r"^#(\d+):?\s+(?:\w+\s+)?cov: (\d+) ft: (\d+)", re.MULTILINE)
SEGMENT = "fuzz_campaign: segment "


def session_cpu_seconds(session):
    """CPU time of every live process of the session, plus what its members reaped."""
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:  # field 6 of stat: the session id
            ticks += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return ticks / TICKS


def die_with_parent():
    """Runs in the fuzzer before exec: it gets SIGINT (its figures, then exit) when this script dies."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGINT, 0, 0, 0)


def log_figures(log):
    """Executions summed over the log's segments; coverage and features as the last segment ends."""
    executions, coverage, features = 0, 0, 0
    for segment in log.split(SEGMENT):
        last = None
        for last in STATUS.finditer(segment):
            pass
        if last:
            executions += int(last.group(1))
            coverage, features = int(last.group(2)), int(last.group(3))
    return executions, coverage, features


class Progress:
    """OUT/progress.json: per target, the CPU and wall time used so far (as of the last poll), its segments, and
    whether it is done (stopped and merged)."""

    def __init__(self, out):
        self.path = os.path.join(out, "progress.json")
        try:
            with open(self.path) as source:
                self.targets = json.load(source)
        except FileNotFoundError:
            self.targets = {}

    def of(self, name):
        return self.targets.setdefault(name, {"cpu_s": 0.0, "wall_s": 0.0, "segments": 0, "done": False})

    def save(self):
        temporary = f"{self.path}.tmp"
        with open(temporary, "w") as sink:
            json.dump(self.targets, sink, indent=1)
        os.replace(temporary, self.path)


def start_target(name, arguments, state):
    binary, corpora, options = TARGETS[name]
    binary = os.path.join(arguments.build, binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"fuzz_campaign: {binary} is not built (bash scripts/sanitize.sh asan)")
    work = os.path.join(arguments.out, "corpus", name)
    artifacts = os.path.join(arguments.out, "artifacts", name)
    os.makedirs(work, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    inputs = [os.path.join(arguments.corpus_root, folder) for folder in corpora]
    if name in SEEDS and os.path.isdir(os.path.join(arguments.build, SEEDS[name])):
        inputs.append(os.path.join(arguments.build, SEEDS[name]))
    log_path = os.path.join(arguments.out, f"{name}.log")
    command = [binary, *options, "-timeout=60", "-rss_limit_mb=2048", f"-artifact_prefix={artifacts}/", work, *inputs]
    environment = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
                       UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    state["segments"] += 1
    with open(log_path, "a") as log:
        log.write(f"{SEGMENT}{state['segments']}: {arguments.cpu_seconds - state['cpu_s']:.1f} CPU-s left "
                  f"of {arguments.cpu_seconds:.1f}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        log.flush()
        fuzzer = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                  start_new_session=True, preexec_fn=die_with_parent)
    if arguments.background:
        # Each fuzzer leads a session, so a scheduler autogroup, of its own: `nice` would not hold it back
        # against other sessions' processes; the group's nice value does.
        try:
            with open(f"/proc/{fuzzer.pid}/autogroup", "w") as group:
                group.write("19")
        except OSError:
            pass
    return {"name": name, "process": fuzzer, "started": time.monotonic(), "log": log_path, "work": work,
            "artifacts": artifacts, "binary": binary, "corpus": inputs[0], "options": options,
            "state": state, "cpu": 0.0}


def finish_target(run):
    state = run["state"]
    state["wall_s"] += time.monotonic() - run["started"]  # its CPU was read at the last poll
    with open(run["log"], errors="replace") as log:
        executions, coverage, features = log_figures(log.read())
    found = sorted(entry for entry in os.listdir(run["artifacts"]) if FINDINGS.match(entry))
    before = len(os.listdir(run["corpus"]))
    max_len = [option for option in run["options"] if option.startswith("-max_len=")]
    subprocess.run([run["binary"], "-merge=1", "-use_counters=0", *max_len, run["corpus"], run["work"]],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return {
        "target": run["name"],
        "wall_s": round(state["wall_s"], 1),
        "cpu_s": round(state["cpu_s"], 1),
        "segments": state["segments"],
        "executions": executions,
        "cov": coverage,
        "ft": features,
        "corpus_files_added": len(os.listdir(run["corpus"])) - before,
        "findings": found,
        "exit_code": run["process"].returncode,
    }


def account(run, progress):
    """Adds the CPU and wall time the running segment used since the last reading to the target's totals."""
    state = run["state"]
    cpu = max(run["cpu"], session_cpu_seconds(run["process"].pid))
    now = time.monotonic()
    state["cpu_s"] += cpu - run["cpu"]
    state["wall_s"] += now - run["started"]
    run["cpu"], run["started"] = cpu, now
    progress.save()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"default: all of {', '.join(TARGETS)}")
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "asan"), help="the asan build folder")
    parser.add_argument("--cpu-seconds", type=float, default=3600, help="CPU budget per target (default 3600)")
    parser.add_argument("--out", default="/tmp/torchscope-fuzz",
                        help="logs, working corpora, findings and progress; the same OUT again resumes")
    parser.add_argument("--corpus-root", default=ROOT,
                        help="the tree whose regression corpora feed the fuzzers and receive the merge "
                             "(default: this checkout)")
    parser.add_argument("--background", action="store_true",
                        help="run the fuzzers at the lowest priority (autogroup nice 19): they take only idle CPU")
    parser.add_argument("--poll", type=float, default=5, help="seconds between CPU readings")
    arguments = parser.parse_args()
    names = arguments.targets or list(TARGETS)
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        parser.error(f"unknown target {', '.join(unknown)} (known: {', '.join(TARGETS)})")
    os.makedirs(arguments.out, exist_ok=True)
    progress = Progress(arguments.out)
    pending = [name for name in names if not progress.of(name)["done"]]
    for name in sorted(set(names) - set(pending)):
        print(f"fuzz_campaign: {name} already done in {arguments.out} (results.jsonl)", file=sys.stderr)
    runs = [start_target(name, arguments, progress.of(name)) for name in pending]
    progress.save()
    results = []
    while runs:
        time.sleep(arguments.poll)
        for run in list(runs):
            process = run["process"]
            if process.poll() is None:
                account(run, progress)
                if run["state"]["cpu_s"] < arguments.cpu_seconds:
                    continue
                os.killpg(process.pid, signal.SIGINT)
                try:
                    process.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            runs.remove(run)
            result = finish_target(run)
            run["state"]["done"] = True
            progress.save()
            results.append(result)
            line = json.dumps(result)
            print(line, flush=True)
            with open(os.path.join(arguments.out, "results.jsonl"), "a") as sink:
                sink.write(line + "\n")
    return 1 if any(result["findings"] for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
