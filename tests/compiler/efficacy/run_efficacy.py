"""The efficacy of `torchscope fix`: for each job in jobs/ (one planted problem each), the share that
`torchscope run` then `torchscope fix RUN.db --max-fixes 1` removes with parity kept.

    python run_efficacy.py --torchscope BIN [--python PY] [--markdown FILE] [--min-share 0.9] [JOB.py ...]

Each job's first line says what is planted and what removing it means:
    # efficacy: rule=RULE fix=FIX_ID[|FIX_ID] removed=CHECK
(A|B: either of the rule's fixes.) CHECK is `graph_breaks_after==0`, `recompiles_after==0`,
`recompiles_after<=1` (one graph for every size after dynamic=True) or `compiles` (a job that never
compiled now compiles). A job counts as fixed when the one fix that ran is a FIX_ID, the check holds and parity was checked and kept. Prints a markdown table (and
writes it to --markdown); exits 1 when the share is under --min-share, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HEADER = re.compile(r"#\s*efficacy:\s*rule=(\S+)\s+fix=(\S+)\s+removed=(\S+)")
JOBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs")


def planted(path: str) -> tuple[str, str, str]:
    with open(path, encoding="utf-8") as handle:
        match = HEADER.match(handle.readline())
    if match is None:
        raise ValueError(f"{path}: the first line is not '# efficacy: rule=... fix=... removed=...'")
    return match.group(1), match.group(2), match.group(3)


def check(removed: str, baseline: dict, fix: dict) -> tuple[bool, str]:
    """Whether the planted problem is gone, and the before -> after figure that says so."""
    if removed == "compiles":
        effect = fix.get("effect") or {}
        return bool(effect.get("shown")), effect.get("text") or "no effect measured"
    match = re.fullmatch(r"(graph_breaks|recompiles)_after(==|<=)(\d+)", removed)
    if match is None:
        raise ValueError(f"unknown check '{removed}'")
    metric, operator, bound = match.group(1), match.group(2), int(match.group(3))
    after = fix.get(f"{metric}_after")
    figure = f"{metric.replace('_', ' ')} {baseline.get(metric)} -> {after}"
    if after is None:
        return False, figure
    return (after == bound if operator == "==" else after <= bound), figure


def run_job(job: str, torchscope: str, python: str, workdir: str) -> dict:
    rule, fix_id, removed = planted(job)
    name = os.path.splitext(os.path.basename(job))[0]
    folder = os.path.join(workdir, name)
    os.makedirs(folder)
    script = shutil.copy(job, folder)
    store, report = os.path.join(folder, "run.db"), os.path.join(folder, "fix.json")
    started = time.monotonic()
    row = {"job": name, "rule": rule, "fix": fix_id, "ran": "", "figure": "", "parity": "", "fixed": False}
    steps = [[torchscope, "run", "--no-summary", "-o", store, "--", python, script],
             [torchscope, "fix", store, "--max-fixes", "1", "--repetitions", "2", "--format", "json", "-o", report]]
    for argv in steps:
        try:
            done = subprocess.run(argv, cwd=folder, capture_output=True, text=True)
        except OSError as error:  # e.g. the binary being relinked
            row["figure"] = f"`{argv[1]}` did not start: {error.strerror}"
            row["seconds"] = time.monotonic() - started
            return row
        if done.returncode != 0 or not os.path.exists(store):
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            row["figure"] = f"`{argv[1]}` exit {done.returncode}: {tail[0]}"
            row["seconds"] = time.monotonic() - started
            return row
    with open(report, encoding="utf-8") as handle:
        result = json.load(handle)
    row["seconds"] = time.monotonic() - started
    tried = [f for f in result.get("fixes", []) if f.get("runs", 0) > 0]
    if not tried:
        reasons = "; ".join(f"{f['id']}: {f.get('reason')}" for f in result.get("fixes", [])) or "no candidate"
        row["figure"] = f"no fix ran ({reasons})"
        return row
    fix = tried[0]
    row["ran"] = fix["id"].split(":")[0]
    gone, row["figure"] = check(removed, result.get("baseline", {}), fix)
    parity = fix.get("parity") or {}
    row["parity"] = "kept" if parity.get("ok") else ("broken" if parity.get("checked") else "not checked")
    row["fixed"] = row["ran"] in fix_id.split("|") and gone and parity.get("ok") is True
    return row


def table(rows: list[dict]) -> str:
    lines = ["| job | planted rule | expected fix | fix run | before -> after | parity | removed | s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        expected = " or ".join(f"`{fix}`" for fix in r["fix"].split("|"))
        lines.append(f"| {r['job']} | `{r['rule']}` | {expected} | {('`' + r['ran'] + '`') if r['ran'] else '-'} "
                     f"| {r['figure']} | {r['parity'] or '-'} | {'yes' if r['fixed'] else 'no'} "
                     f"| {r.get('seconds', 0):.0f} |")
    fixed = sum(r["fixed"] for r in rows)
    lines.append("")
    lines.append(f"removed with parity kept: {fixed} of {len(rows)} ({100.0 * fixed / max(len(rows), 1):.0f} %)")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="run_efficacy.py")
    parser.add_argument("--torchscope", required=True, help="the torchscope binary")
    parser.add_argument("--python", default=sys.executable, help="the jobs' interpreter")
    parser.add_argument("--markdown", help="also write the table here")
    parser.add_argument("--min-share", type=float, default=0.9)
    parser.add_argument("jobs", nargs="*", help="job scripts (default: every job in jobs/)")
    args = parser.parse_args(argv)
    jobs = args.jobs or sorted(os.path.join(JOBS, f) for f in os.listdir(JOBS) if f.endswith(".py"))
    if not os.access(args.torchscope, os.X_OK):
        print(f"run_efficacy: {args.torchscope} is not an executable", file=sys.stderr)
        return 2
    try:
        for job in jobs:
            planted(job)
    except (OSError, ValueError) as error:
        print(f"run_efficacy: {error}", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="torchscope-efficacy-") as workdir:
        for job in jobs:
            rows.append(run_job(job, args.torchscope, args.python, workdir))
            print(f"{rows[-1]['job']}: {'removed' if rows[-1]['fixed'] else 'not removed'} ({rows[-1]['figure']})",
                  file=sys.stderr, flush=True)
    text = table(rows)
    sys.stdout.write(text)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write(text)
    share = sum(r["fixed"] for r in rows) / max(len(rows), 1)
    return 0 if share >= args.min_share else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
