#!/usr/bin/env python3
"""Runs the fuzz targets for a stated budget of CPU time each, then keeps what they found.

Each target runs in a session of its own, fed from its regression corpus in the repository; it is
stopped (SIGINT, so libFuzzer prints its final figures) once its process tree has used the CPU budget:
the user + system time of the fuzzer and of the children it reaped (`-fork` workers). A budget in
CPU time, not wall time, means the same campaign on a loaded or a quiet machine. Afterwards the
inputs that reach new coverage are merged into the repository corpus (`-merge=1 -use_counters=0`,
as docs/reliability.md describes), and every crash, leak, timeout or OOM input is listed: each must
become a regression file in the corpus once fixed.

    python3 scripts/fuzz_campaign.py --cpu-seconds 3600 --out /tmp/campaign      # all four targets
    python3 scripts/fuzz_campaign.py --cpu-seconds 600 fuzz_kineto store_reader_fuzz
    python3 scripts/fuzz_campaign.py --background ...    # on a shared machine: only its idle CPU

Prints one JSON line per target (also written to OUT/results.jsonl). Build the targets first:
`bash scripts/sanitize.sh asan` (or `cmake --preset asan && cmake --build build/asan --target ...`).
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = os.sysconf("SC_CLK_TCK")

# target -> (binary under the build folder, corpus folders (the first one receives the merge), options)
TARGETS = {
    "fuzz_torch_trace": ("interop/fuzz/fuzz_torch_trace", ["interop/fuzz/corpus/torch_trace"],
                         ["-max_len=8192"]),
    "fuzz_kineto": ("interop/fuzz/fuzz_kineto", ["interop/fuzz/corpus/kineto"], ["-max_len=8192"]),
    "cupti_buffer_fuzz": ("collector/cupti/fuzz/cupti_buffer_fuzz", ["collector/cupti/fuzz/corpus"],
                          ["-max_len=4096"]),
    # Each input is analysed and rendered in six formats: a crash must not end the campaign.
    "store_reader_fuzz": ("store/fuzz/store_reader_fuzz", ["store/fuzz/corpus"],
                          ["-max_len=98304", "-fork=1", "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1"]),
}
SEEDS = {"fuzz_torch_trace": "interop/fuzz/seeds/torch_trace", "fuzz_kineto": "interop/fuzz/seeds/kineto"}
FINDINGS = re.compile(r"^(crash|leak|timeout|oom|slow-unit)-")
STATUS = re.compile(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)")


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


def run_target(name, build, out, cpu_budget, background):
    binary, corpora, options = TARGETS[name]
    binary = os.path.join(build, binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"fuzz_campaign: {binary} is not built (bash scripts/sanitize.sh asan)")
    work = os.path.join(out, "corpus", name)
    artifacts = os.path.join(out, "artifacts", name)
    os.makedirs(work, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    inputs = [os.path.join(ROOT, folder) for folder in corpora]
    if name in SEEDS and os.path.isdir(os.path.join(build, SEEDS[name])):
        inputs.append(os.path.join(build, SEEDS[name]))
    log_path = os.path.join(out, f"{name}.log")
    command = [binary, *options, "-timeout=60", "-rss_limit_mb=2048", f"-artifact_prefix={artifacts}/", work, *inputs]
    environment = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
                       UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    started = time.monotonic()
    with open(log_path, "w") as log:
        fuzzer = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                  start_new_session=True)
    if background:
        # Each fuzzer leads a session, so a scheduler autogroup, of its own: `nice` would not hold it back
        # against other sessions' processes; the group's nice value does.
        try:
            with open(f"/proc/{fuzzer.pid}/autogroup", "w") as group:
                group.write("19")
        except OSError:
            pass
    return {"name": name, "process": fuzzer, "started": started, "log": log_path, "work": work,
            "artifacts": artifacts, "binary": binary, "corpus": os.path.join(ROOT, corpora[0]), "options": options,
            "cpu_budget": cpu_budget, "cpu": 0.0}


def finish_target(run):
    log = open(run["log"], errors="replace").read()
    executions, coverage, features = 0, 0, 0
    for match in STATUS.finditer(log):
        executions, coverage, features = (int(value) for value in match.groups())
    found = sorted(entry for entry in os.listdir(run["artifacts"]) if FINDINGS.match(entry))
    before = len(os.listdir(run["corpus"]))
    max_len = [option for option in run["options"] if option.startswith("-max_len=")]
    subprocess.run([run["binary"], "-merge=1", "-use_counters=0", *max_len, run["corpus"], run["work"]],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return {
        "target": run["name"],
        "wall_s": round(time.monotonic() - run["started"], 1),
        "cpu_s": round(run["cpu"], 1),
        "executions": executions,
        "cov": coverage,
        "ft": features,
        "corpus_files_added": len(os.listdir(run["corpus"])) - before,
        "findings": found,
        "exit_code": run["process"].returncode,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"default: all of {', '.join(TARGETS)}")
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "asan"), help="the asan build folder")
    parser.add_argument("--cpu-seconds", type=float, default=3600, help="CPU budget per target (default 3600)")
    parser.add_argument("--out", default="/tmp/torchscope-fuzz", help="logs, working corpora and findings")
    parser.add_argument("--background", action="store_true",
                        help="run the fuzzers at the lowest priority (autogroup nice 19): they take only idle CPU")
    parser.add_argument("--poll", type=float, default=5, help="seconds between CPU readings")
    arguments = parser.parse_args()
    names = arguments.targets or list(TARGETS)
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        parser.error(f"unknown target {', '.join(unknown)} (known: {', '.join(TARGETS)})")
    os.makedirs(arguments.out, exist_ok=True)
    runs = [run_target(name, arguments.build, arguments.out, arguments.cpu_seconds, arguments.background) for name in names]
    results = []
    while runs:
        time.sleep(arguments.poll)
        for run in list(runs):
            process = run["process"]
            if process.poll() is None:
                run["cpu"] = max(run["cpu"], session_cpu_seconds(process.pid))
                if run["cpu"] < run["cpu_budget"]:
                    continue
                os.killpg(process.pid, signal.SIGINT)
                try:
                    process.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            runs.remove(run)
            result = finish_target(run)
            results.append(result)
            line = json.dumps(result)
            print(line, flush=True)
            with open(os.path.join(arguments.out, "results.jsonl"), "a") as sink:
                sink.write(line + "\n")
    return 1 if any(result["findings"] for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
