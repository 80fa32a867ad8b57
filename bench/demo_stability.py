"""Runs `torchscope demo` several times back to back and summarises what docs/performance.md reports.

Per demo run: its wall time and the CPU time of its process tree, each measured fix's verdict with the
interval it rests on, and the combined fixes' end-to-end speed-up as wall and as CPU time with their 95 %
intervals and the loss parity. Then whether every run reached the same verdicts. Writes the summary as
JSON (--out) and prints it as a Markdown table.

    .venv/bin/python bench/demo_stability.py --torchscope build/dev/bin/torchscope [--runs 3] \
        [--out demo-stability.json] [--workdir DIR] [-- extra torchscope demo arguments]
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time


def machine() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), "")
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu_model": model, "system": platform.platform()}


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def speedup(fix: dict, metric: str) -> dict | None:
    return (fix.get("metrics", {}).get(metric) or {}).get("speedup")


def run_demo(torchscope: str, workdir: str, extra: list[str]) -> dict:
    os.makedirs(workdir, exist_ok=True)
    load_before = os.getloadavg()
    cpu_before = children_cpu_s()
    started = time.monotonic()
    with open(os.path.join(workdir, "demo.log"), "w", encoding="utf-8") as log:
        code = subprocess.call([torchscope, "demo", "--workdir", workdir, *extra], stdout=log, stderr=subprocess.STDOUT)
    result = {"exit_code": code, "wall_s": time.monotonic() - started, "cpu_s": children_cpu_s() - cpu_before,
              "load_before": load_before, "load_after": os.getloadavg(), "workdir": workdir}
    report_path = os.path.join(workdir, "fix.json")
    if code != 0 or not os.path.exists(report_path):
        return result
    with open(report_path, encoding="utf-8") as report_file:
        report = json.load(report_file)
    result["runs_of_the_job"] = report.get("runs")
    result["verdicts"] = {fix["id"]: {"status": fix["status"], "verdict": fix.get("verdict"), "runs": fix.get("runs")}
                          for fix in report["fixes"] if fix.get("measured")}
    combined = report.get("combined")
    if combined:
        result["combined"] = {"status": combined["status"], "members": combined.get("members", []),
                              "end_to_end_wall": speedup(combined, "end_to_end_wall"),
                              "end_to_end_cpu": speedup(combined, "end_to_end_cpu"),
                              "parity": combined.get("parity")}
    return result


def interval_text(interval: dict | None) -> str:
    if not interval or interval.get("median") is None:
        return "-"
    if interval.get("ci_low") is None:
        return f"{interval['median']:.2f}x"
    return f"{interval['median']:.2f}x [{interval['ci_low']:.2f}, {interval['ci_high']:.2f}]"


def markdown(summary: dict) -> str:
    lines = ["| run | demo wall | demo CPU | load before | fixes (verdict, runs, interval) | combined end-to-end wall "
             "| combined end-to-end CPU | parity |", "|---|---|---|---|---|---|---|---|"]
    for index, run in enumerate(summary["demos"], 1):
        fixes = "; ".join(f"{fix_id}: {v['status']}, {v['runs']}, {interval_text(v['verdict'])}"
                          for fix_id, v in run.get("verdicts", {}).items())
        combined = run.get("combined") or {}
        parity = combined.get("parity") or {}
        lines.append(f"| {index} | {run['wall_s'] / 60:.1f} min | {run['cpu_s'] / 60:.1f} min | "
                     f"{run['load_before'][0]:.1f} | {fixes or '-'} | {interval_text(combined.get('end_to_end_wall'))} | "
                     f"{interval_text(combined.get('end_to_end_cpu'))} | "
                     f"{'ok' if parity.get('ok') else '-'} (max rel. diff {parity.get('max_rel_diff')}) |")
    lines.append(f"\nSame verdicts in every run: {summary['same_verdicts']}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchscope", required=True, help="the torchscope executable")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workdir", default="demo-stability")
    parser.add_argument("--out", default="demo-stability.json")
    parser.add_argument("extra", nargs="*", help="arguments for torchscope demo (after --)")
    arguments = parser.parse_args(argv)
    demos = []
    for index in range(1, arguments.runs + 1):
        demos.append(run_demo(arguments.torchscope, os.path.join(arguments.workdir, f"run-{index}"), arguments.extra))
        print(f"demo {index}: {demos[-1]['wall_s'] / 60:.1f} min, exit {demos[-1]['exit_code']}", file=sys.stderr)
    verdicts = [{fix_id: v["status"] for fix_id, v in demo.get("verdicts", {}).items()} for demo in demos]
    summary = {"machine": machine(), "demos": demos,
               "same_verdicts": all(v == verdicts[0] for v in verdicts) and all(d["exit_code"] == 0 for d in demos)}
    with open(arguments.out, "w", encoding="utf-8") as out:
        json.dump(summary, out, indent=2)
    print(markdown(summary))
    return 0 if summary["same_verdicts"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
