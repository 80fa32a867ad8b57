#!/usr/bin/env python3
"""Runs third-party model jobs under `torchscope run` and scores torchscope against torch's own log.

Each job in tests/validation/jobs/ runs once, with TORCH_LOGS=graph_breaks,recompiles, so that torch's log of the
same run lands on stderr (and TORCH_TRACE, for the stack that led to each compilation). The harness parses that log (the reference), reads the job's store and
`torchscope advise --format json`, and matches them (agreement.py). It writes one JSON file per model and, on
request, the Markdown tables of docs/validation.md and the JSON beside it.

--check compares each model's disagreements with known_gaps.json: a disagreement that is not listed fails, and
so does a listed one that no longer happens (the list must be kept true). Exit codes: 0 as expected, 1 a
difference or a job that failed, 2 bad input.

    .venv/bin/python tests/validation/validate_models.py --torchscope build/dev/bin/torchscope \\
        --markdown docs/validation.md --json docs/validation-models.json
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import agreement
import torch_logs
import torchscope_side

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
JOBS = HERE / "jobs"
KNOWN_GAPS = HERE / "known_gaps.json"
BEGIN, END = "<!-- validation-models:begin -->", "<!-- validation-models:end -->"


def job_names() -> list[str]:
    return sorted(path.stem for path in JOBS.glob("*.py"))


def describe(job: Path) -> str:
    """The first sentence of the job's docstring."""
    text = job.read_text()
    start = text.find('"""') + 3
    doc = text[start:text.find('"""', start)]
    return " ".join(doc.split()).split(". ")[0].rstrip(".")


def run_job(torchscope: str, job: Path, out: Path, backend: str) -> dict:
    store, trace = out / f"{job.stem}.db", out / f"{job.stem}.trace"
    for stale in torchscope_side.stores_of(store):
        stale.unlink(missing_ok=True)
    shutil.rmtree(trace, ignore_errors=True)
    env = dict(os.environ, TORCH_LOGS="graph_breaks,recompiles", TORCH_TRACE=str(trace), HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", VALIDATION_BACKEND=backend, OMP_NUM_THREADS="1", TORCHSCOPE_GPU="0",
               PYTHONHASHSEED="0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with open(out / f"{job.stem}.stderr", "w") as stderr:
        result = subprocess.run([torchscope, "run", "-o", str(store), "--no-summary", "--", sys.executable, str(job)],
                                stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=out)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # Only the compilations' stacks are kept: the trace itself holds every graph and is megabytes large.
    stacks = {}
    for log in sorted(trace.glob("*.log")):
        stacks.update(torch_logs.compile_stacks(log.read_text(errors="replace")))
    (out / f"{job.stem}.stacks.json").write_text(json.dumps(
        {compile_id: [vars(frame) for frame in frames] for compile_id, frames in stacks.items()}))
    shutil.rmtree(trace, ignore_errors=True)
    return {"store": store, "exit_code": result.returncode, "cpu_seconds": round(cpu, 1),
            "wall_seconds": round(time.monotonic() - started, 1)}


def validate(torchscope: str, name: str, out: Path, backend: str, paths: agreement.Paths, rescore: bool) -> dict:
    job = JOBS / f"{name}.py"
    if rescore:  # the job's store and log of an earlier run in the same folder
        previous = json.loads((out / f"{name}.json").read_text())
        run = {key: previous[key] for key in ("exit_code", "cpu_seconds", "wall_seconds")}
        run["store"] = out / f"{name}.db"
    else:
        run = run_job(torchscope, job, out, backend)
    log = torch_logs.parse((out / f"{name}.stderr").read_text(errors="replace"))
    stacks = {compile_id: [torch_logs.Frame(**frame) for frame in frames]
              for compile_id, frames in json.loads((out / f"{name}.stacks.json").read_text()).items()}
    side = torchscope_side.view(torchscope, run["store"])
    result = agreement.compare(log, stacks, side, paths, {str(job)})
    return {
        "model": name,
        "description": describe(job),
        "backend": backend,
        "exit_code": run["exit_code"],
        "cpu_seconds": run["cpu_seconds"],
        "wall_seconds": run["wall_seconds"],
        "advise_error": side.advise_error,
        "summary": result.summary(),
        "units": [vars(unit) for unit in result.units],
        "disagreements": [vars(item) for item in result.disagreements],
    }


def load_known_gaps(path: Path) -> dict[str, list[dict]]:
    return json.loads(path.read_text())["models"]


def check(report: dict, known: list[dict]) -> list[str]:
    """Differences between the model's disagreements and its known gaps, as lines for the user."""
    problems = []
    if report["exit_code"] != 0:
        problems.append(f"the job exited {report['exit_code']}: see {report['model']}.stderr")
    if report["advise_error"]:
        problems.append(report["advise_error"])
    # A recompile too cheap for the rule to report is expected to have no finding; whether it is depends on the
    # run's wall time, so it is neither a failure nor a gap to list.
    disagreements = [item for item in report["disagreements"] if item["kind"] != "below-threshold"]
    seen = {(item["kind"], item["key"]) for item in disagreements}
    listed = {(item["kind"], item["key"]) for item in known}
    for item in disagreements:
        if (item["kind"], item["key"]) not in listed:
            problems.append(f"new disagreement: {item['kind']} {item['key']} ({item['detail']})")
    for item in known:
        if not item.get("cause", "").strip():
            problems.append(f"known gap without a cause in known_gaps.json: {item['kind']} {item['key']}")
    for kind, key in sorted(listed - seen):
        problems.append(f"known gap no longer happens, remove it from known_gaps.json: {kind} {key}")
    return problems


def _ratio(part: int, whole: int) -> str:
    return "-" if whole == 0 else f"{part}/{whole} ({100 * part / whole:.0f} %)"


def _dig(summary: dict, path: tuple[str, ...]) -> int:
    for key in path:
        summary = summary[key]
    return summary


def reportable(family: dict) -> int:
    """The units a finding is expected for: all but the recompiles under the rule's impact threshold."""
    return family["units"] - family.get("below_threshold", 0)


def goals_met(summary: dict) -> bool:
    breaks, recompiles = summary["graph-break"], summary["recompile"]
    findings = summary["findings"]
    return (breaks["found"] == reportable(breaks) and recompiles["found"] == reportable(recompiles)
            and (findings == 0 or summary["supported_findings"] >= 0.95 * findings)
            and summary["user_located_findings"] == findings
            and summary["job_located_findings"] == summary["job_line_findings"])


def markdown(reports: list[dict], known: dict[str, list[dict]]) -> str:
    lines = [
        "### Third-party models: torchscope / torch's log",
        "",
        "| model | CPU s | break recall | break class | recompile recall | recompile class | precision | "
        "user-code location | in the job's file | goals |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for report in reports:
        s = report["summary"]
        b, r = s["graph-break"], s["recompile"]
        lines.append(
            f"| {report['model']} | {report['cpu_seconds']:.0f} | {_ratio(b['found'], reportable(b))} | "
            f"{_ratio(b['found'], b['located'])} | {_ratio(r['found'], reportable(r))} | "
            f"{_ratio(r['found'], r['located'])} | {_ratio(s['supported_findings'], s['findings'])} | "
            f"{_ratio(s['user_located_findings'], s['findings'])} | "
            f"{_ratio(s['job_located_findings'], s['job_line_findings'])} | "
            f"{'met' if goals_met(s) else '**not met**'} |")
    if len(reports) > 1:
        def total(*path: str) -> int:
            return sum(_dig(report["summary"], path) for report in reports)

        lines.append(
            f"| all | {sum(report['cpu_seconds'] for report in reports):.0f} | "
            f"{_ratio(total('graph-break', 'found'), sum(reportable(r['summary']['graph-break']) for r in reports))} | "
            f"{_ratio(total('graph-break', 'found'), total('graph-break', 'located'))} | "
            f"{_ratio(total('recompile', 'found'), sum(reportable(r['summary']['recompile']) for r in reports))} | "
            f"{_ratio(total('recompile', 'found'), total('recompile', 'located'))} | "
            f"{_ratio(total('supported_findings'), total('findings'))} | "
            f"{_ratio(total('user_located_findings'), total('findings'))} | "
            f"{_ratio(total('job_located_findings'), total('job_line_findings'))} | "
            f"{sum(goals_met(report['summary']) for report in reports)} of {len(reports)} met |")
    lines += [
        "",
        "Counts, torch's log / the store / the findings' counts:",
        "",
        "| model | graph-break entries | recompiles | recompile units under the threshold | limit hits (torch) | "
        "findings (graph-break/*, recompile/*) |",
        "|---|---|---|---|---|---|",
    ]
    for report in reports:
        s = report["summary"]
        lines.append(f"| {report['model']} | {s['torch_break_entries']} / {s['stored_breaks']} / {s['reported_breaks']} | "
                     f"{s['torch_recompiles']} / {s['stored_recompiles']} / {s['reported_recompiles']} | "
                     f"{s['recompile'].get('below_threshold', 0)} | {s['torch_limit_hits']} | {s['findings']} |")
    lines += ["", "Known disagreements (tests/validation/known_gaps.json), by cause:", ""]
    by_cause: dict[str, list[str]] = {}
    for report in reports:
        for gap in known.get(report["model"], []):
            by_cause.setdefault(gap["cause"], []).append(f"{report['model']}: {gap['kind']} `{gap['key']}`")
    for number, (cause, where) in enumerate(by_cause.items(), 1):
        lines.append(f"{number}. {cause}.")
        lines += [f"   - {item}" for item in where]
    if not by_cause:
        lines.append("None.")
    below = [f"- {report['model']}: `{item['key']}` ({item['detail']})" for report in reports
             for item in report["disagreements"] if item["kind"] == "below-threshold"]
    lines += ["", "Recompiles without a finding (or left out of a finding's count) because their compilations took "
                  "less than 1 % of the run (the rule's impact threshold; these depend on the machine's load):", ""]
    lines += below or ["None."]
    return "\n".join(lines)


def write_markdown(path: Path, tables: str) -> None:
    text = path.read_text()
    head, found, rest = text.partition(BEGIN)
    if not found:
        raise SystemExit(f"{path} has no {BEGIN} marker")
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{tables}\n{END}{tail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchscope", default=str(ROOT / "build/dev/bin/torchscope"))
    parser.add_argument("--model", action="append", choices=job_names(), help="a job of tests/validation/jobs (all by default)")
    parser.add_argument("--backend", default="aot_eager",
                        help="torch.compile backend of the jobs (default aot_eager: Dynamo's breaks and recompiles "
                             "without Inductor's code generation, to fit CI's time)")
    parser.add_argument("--out", type=Path, default=Path.cwd() / "validation-models", help="stores, logs, per-model JSON")
    parser.add_argument("--rescore", action="store_true",
                        help="do not run the jobs: score the stores and logs an earlier run left in --out")
    parser.add_argument("--known-gaps", type=Path, default=KNOWN_GAPS)
    parser.add_argument("--check", action="store_true", help="exit 1 unless the disagreements are the known gaps")
    parser.add_argument("--markdown", type=Path, help="write the tables into this file between the markers")
    parser.add_argument("--json", type=Path, help="write all models' results into this file")
    args = parser.parse_args()
    if not Path(args.torchscope).is_file():
        print(f"no torchscope at {args.torchscope}", file=sys.stderr)
        return 2
    args.torchscope = str(Path(args.torchscope).resolve())  # the jobs run in their own folders
    args.out.mkdir(parents=True, exist_ok=True)
    known = load_known_gaps(args.known_gaps)
    paths = agreement.Paths(torch_logs.torch_directory(), str(ROOT))

    reports, failed = [], False
    for name in args.model or job_names():
        report = validate(args.torchscope, name, args.out.resolve(), args.backend, paths, args.rescore)
        (args.out / f"{name}.json").write_text(json.dumps(report, indent=1) + "\n")
        reports.append(report)
        problems = check(report, known.get(name, []))
        s = report["summary"]
        print(f"{name}: {report['cpu_seconds']:.0f} s CPU; break sites {s['graph-break']['found']}/"
              f"{reportable(s['graph-break'])}, recompiles {s['recompile']['found']}/{reportable(s['recompile'])}, "
              f"findings supported {s['supported_findings']}/{s['findings']}, "
              f"in user code {s['user_located_findings']}/{s['findings']}, in the job's file "
              f"{s['job_located_findings']}/{s['job_line_findings']}; goals "
              f"{'met' if goals_met(s) else 'not met'}")
        for item in report["disagreements"]:
            print(f"  {item['kind']}: {item['key']} ({item['detail']})")
        if args.check and problems:
            failed = True
            for problem in problems:
                print(f"  FAIL {problem}")
    if args.markdown:
        write_markdown(args.markdown, markdown(reports, known))
    if args.json:
        args.json.write_text(json.dumps({"backend": args.backend, "models": reports}, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
