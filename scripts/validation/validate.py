#!/usr/bin/env python3
"""Checks torchscope's importers against the reference tools on the shared corpus.

TORCH_TRACE logs: compile, restart (graph break), recompile and failure counts must equal tlparse's.
Kineto traces: kernel count, kernel time per stream and GPU idle time must match HolisticTraceAnalysis's
temporal breakdown within 1 %. Writes a Markdown table (the body of docs/validation.md) and exits 1 on
any disagreement.

Run with the validation venv's Python (scripts/validation/setup_venv.sh creates it):
    build/validation-venv/bin/python scripts/validation/validate.py \
        --torchscope build/dev/bin/torchscope --markdown docs/validation.md
"""
from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import logging
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 0.01
# HTA's temporal breakdown counts every record on a GPU stream as GPU activity, cuda_sync waits
# included; the same records, from the store's syncs table.
SYNCS_ON_STREAMS = " UNION ALL SELECT start_ns, end_ns FROM syncs WHERE stream >= 0 AND origin = 'import'"


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def torchscope_import(torchscope: str, inputs: list[Path], store: Path) -> dict:
    result = run([torchscope, "import", *map(str, inputs), "-o", str(store)])
    if result.returncode != 0:
        raise RuntimeError(f"torchscope import {inputs}: {result.stderr.strip()}")
    stats = run([torchscope, "stats", str(store), "--format", "json"])
    if stats.returncode != 0:
        raise RuntimeError(f"torchscope stats: {stats.stderr.strip()}")
    return json.loads(stats.stdout)


# ---------------------------------------------------------------- TORCH_TRACE vs tlparse

def tlparse_counts(tlparse: str, log: Path, scratch: Path) -> dict:
    out = scratch / f"tl_{log.stem}"
    result = run([tlparse, str(log), "-o", str(out), "--overwrite", "--no-browser"])
    if result.returncode != 0:
        raise RuntimeError(f"tlparse {log}: {result.stderr.strip()}")
    directory = json.loads((out / "compile_directory.json").read_text())
    compiles = sum(1 for entry in directory.values() for artifact in entry.get("artifacts", [])
                   if artifact["name"].startswith("compilation_metrics"))
    recompiled = set()  # distinct [frame/compile] ids with compile > 0; "_<n>" suffixes are restart attempts
    for compile_id in directory:
        match = re.fullmatch(r"\[(\d+)/(\d+)(?:_\d+)?\]", compile_id)
        if match and int(match.group(2)) > 0:
            recompiled.add(match.groups())
    recompiles = len(recompiled)
    html = (out / "failures_and_restarts.html").read_text()
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)[1:]
    restarts = sum("RestartAnalysis" in row for row in rows)
    return {"compiles": compiles, "restarts": restarts, "recompiles": recompiles, "failures": len(rows) - restarts}


def store_compile_counts(stats: dict, store: Path) -> dict:
    with contextlib.closing(sqlite3.connect(store)) as db:
        restarts = db.execute("SELECT COALESCE(SUM(json_array_length(restart_reasons)), 0) FROM compiles").fetchone()[0]
        failures = db.execute("SELECT COUNT(*) FROM compiles WHERE status = 'failed'").fetchone()[0]
    return {"compiles": stats.get("compiles", 0), "restarts": restarts, "recompiles": stats.get("recompiles", 0),
            "failures": failures}


def torch_trace_rows(args, scratch: Path) -> tuple[list[str], bool]:
    corpus = args.corpus / "torch_trace"
    inputs = sorted(corpus.glob("*.log")) + [corpus / "multi_rank_logs"]
    # The project's own fixture from torch 2.13, with graph-break artifacts and recompiles (tlparse reads no gzip).
    for packed in sorted((ROOT / "tests/interop/data").glob("*.log.gz")):
        unpacked = scratch / packed.name.removesuffix(".gz")
        unpacked.write_bytes(gzip.decompress(packed.read_bytes()))
        inputs.append(unpacked)
    rows, ok = [], True
    for source in inputs:
        logs = sorted(source.glob("*.log")) if source.is_dir() else [source]
        reference = {"compiles": 0, "restarts": 0, "recompiles": 0, "failures": 0}
        for log in logs:
            for key, value in tlparse_counts(args.tlparse, log, scratch).items():
                reference[key] += value
        store = scratch / f"{source.stem}.db"
        ours = store_compile_counts(torchscope_import(args.torchscope, [source], store), store)
        agree = ours == reference
        ok &= agree
        cells = [f"{ours[k]} / {reference[k]}" for k in ("compiles", "restarts", "recompiles", "failures")]
        rows.append(f"| {source.name}{'/' if source.is_dir() else ''} | {' | '.join(cells)} | "
                    f"{'yes' if agree else '**no**'} |")
    return rows, ok


# ---------------------------------------------------------------- Kineto vs HTA

def hta_numbers(trace: Path, scratch: Path) -> dict | None:
    # HTA's own switches for counting every GPU record in the file, at the trace's own resolution:
    # keep fractional microseconds, and keep kernels whose launch is outside the profiled steps
    # (HTA drops them when a trace has two or more ProfilerStep annotations).
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    from hta.common.trace import Trace  # the validation venv only
    from hta.trace_analysis import TraceAnalysis

    Trace._filter_irrelevant_gpu_kernels = lambda self, include_last_profiler_step=False: None

    trace_dir = scratch / f"hta_{trace.name}"
    trace_dir.mkdir()
    shutil.copy(trace, trace_dir / trace.name)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        analysis = TraceAnalysis(trace_dir=str(trace_dir), include_last_profiler_step=True)
        frame = analysis.t.get_trace(next(iter(analysis.t.traces)))
        symbols = analysis.t.symbol_table.get_sym_table()
        kernels = frame[frame["cat"].map(lambda index: symbols[index]) == "kernel"]
        if kernels.empty:
            return None
        breakdown = analysis.get_temporal_breakdown(visualize=False)
    per_stream = {int(stream): float(total) for stream, total in kernels.groupby("stream")["dur"].sum().items()}
    return {"kernels": len(kernels), "per_stream_us": per_stream,
            "idle_us": float(breakdown["idle_time(us)"].iloc[0])}


def store_gpu_numbers(stats: dict, store: Path) -> dict:
    with contextlib.closing(sqlite3.connect(store)) as db:
        per_stream = {stream: total / 1000.0 for stream, total in
                      db.execute("SELECT stream, SUM(end_ns - start_ns) FROM kernels GROUP BY stream")}
        intervals = sorted(db.execute(
            "SELECT start_ns, end_ns FROM kernels UNION ALL SELECT start_ns, end_ns FROM memcpy "
            "UNION ALL SELECT start_ns, end_ns FROM memset" + SYNCS_ON_STREAMS).fetchall())
    busy, current_start, current_end = 0, None, None
    for start, end in intervals:
        if current_end is None or start > current_end:
            if current_end is not None:
                busy += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None:
        busy += current_end - current_start
    span = max(end for _, end in intervals) - intervals[0][0] if intervals else 0
    return {"kernels": stats.get("kernels", 0), "per_stream_us": per_stream, "idle_us": (span - busy) / 1000.0}


def close(ours: float, reference: float) -> bool:
    return abs(ours - reference) <= TOLERANCE * max(abs(reference), 1e-9)


def advise_findings(torchscope: str, store: Path) -> str:
    result = run([torchscope, "advise", str(store), "--format", "json"])
    if result.returncode != 0:
        return "pending (advise: " + (result.stderr.strip().splitlines() or ["failed"])[-1][:60] + ")"
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        return "pending (advise wrote no JSON)"
    findings = report.get("findings", report) if isinstance(report, dict) else report
    rules = sorted({finding.get("rule", "?") for finding in findings if isinstance(finding, dict)})
    return ", ".join(rules) if rules else "none"


def kineto_rows(args, scratch: Path) -> tuple[list[str], bool]:
    rows, ok = [], True
    advise_available = run([args.torchscope, "advise", "--help"]).returncode == 0
    for trace in sorted((args.corpus / "kineto").glob("*.json.gz")):
        store = scratch / f"{trace.name}.db"
        ours = store_gpu_numbers(torchscope_import(args.torchscope, [trace], store), store)
        reference = hta_numbers(trace, scratch)
        findings = advise_findings(args.torchscope, store) if advise_available else "pending (no `torchscope advise`)"
        if reference is None:
            agree = ours["kernels"] == 0
            rows.append(f"| {trace.name} | {ours['kernels']} / 0 | - | - | {'yes' if agree else '**no**'} | {findings} |")
            ok &= agree
            continue
        streams_agree = set(ours["per_stream_us"]) == set(reference["per_stream_us"]) and all(
            close(ours["per_stream_us"][s], reference["per_stream_us"][s]) for s in reference["per_stream_us"])
        worst = max(abs(ours["per_stream_us"].get(s, 0) - t) / max(t, 1e-9) for s, t in reference["per_stream_us"].items())
        agree = ours["kernels"] == reference["kernels"] and streams_agree and close(ours["idle_us"], reference["idle_us"])
        ok &= agree
        idle_delta = abs(ours["idle_us"] - reference["idle_us"]) / max(reference["idle_us"], 1e-9)
        rows.append(f"| {trace.name} | {ours['kernels']} / {reference['kernels']} | "
                    f"{len(reference['per_stream_us'])} streams, max diff {100 * worst:.3f} % | "
                    f"{ours['idle_us'] / 1e3:.3f} / {reference['idle_us'] / 1e3:.3f} ms ({100 * idle_delta:.3f} %) | "
                    f"{'yes' if agree else '**no**'} | {findings} |")
    return rows, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchscope", default=str(ROOT / "build/dev/bin/torchscope"))
    parser.add_argument("--tlparse", default=str(Path(sys.executable).parent / "tlparse"))
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests/corpus")
    parser.add_argument("--markdown", type=Path, help="write the tables into this file between the markers")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="torchscope-validation-") as scratch_dir:
        scratch = Path(scratch_dir)
        trace_rows, traces_ok = torch_trace_rows(args, scratch)
        kineto, kineto_ok = kineto_rows(args, scratch)
    tables = "\n".join([
        "### TORCH_TRACE logs: torchscope / tlparse",
        "",
        "| log | compiles | restarts | recompiles | failures | equal |",
        "|---|---|---|---|---|---|",
        *trace_rows,
        "",
        "### Kineto traces: torchscope / HTA",
        "",
        "| trace | kernels | kernel time per stream | GPU idle time | within 1 % | analyzer findings |",
        "|---|---|---|---|---|---|",
        *kineto,
    ])
    if args.markdown:
        text = args.markdown.read_text()
        begin, end = "<!-- validation:begin -->", "<!-- validation:end -->"
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(end)
        args.markdown.write_text(f"{head}{begin}\n{tables}\n{end}{tail}")
    print(tables)
    return 0 if traces_ok and kineto_ok else 1


if __name__ == "__main__":
    sys.exit(main())
