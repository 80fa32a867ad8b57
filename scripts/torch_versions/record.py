"""Records job.py with one torch release: TORCH_TRACE fixtures and what the collector stored, per version.

    python3 scripts/torch_versions/record.py --torch 2.5.1 [--venv-root DIR] [--keep-venv] [--keep-raw DIR]
    python3 scripts/torch_versions/record.py --python /path/to/bin/python   (an interpreter with torch)
    python3 scripts/torch_versions/record.py --table                         (the manifest as a Markdown table)

With --torch, a virtual environment with torch==VERSION and numpy is made under --venv-root (with the
Python running this script) and deleted afterwards. job.py runs twice with one fresh Inductor cache
directory: `cold` (FX graph cache misses) and `warm` (hits). Each run has TORCH_TRACE set and runs
under the collector (LD_PRELOAD), so the trace and the store describe the same process. Each log is
shrunk by tracelog.shrink (the filter is described there) and written to
<out>/torch-<version>-<run>.log.gz; <out>/manifest.json gets the version's entry: the paths the
replay tests need, the job's `# expect:` markers, and per run the counts in torch's trace and in the
collector's store, with the store's diagnostics.
"""

import argparse
import ast
import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import tracelog

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
JOB = HERE / "job.py"
DEFAULT_OUT = ROOT / "tests" / "interop" / "data" / "torch_versions"
DEFAULT_COLLECTOR = ROOT / "build" / "dev" / "lib" / "libtorchscope_collector.so"
RUNS = ("cold", "warm")
_MARKER = re.compile(r"#\s*expect:\s*(?P<kind>(?:break|recompile)-[a-z-]+)")


def job_markers():
    """{line: kind} of the job's `# expect: <kind>` comments."""
    markers = {}
    for number, line in enumerate(JOB.read_text().splitlines(), start=1):
        match = _MARKER.search(line)
        if match:
            markers[number] = match["kind"]
    return markers


def job_steps():
    for node in ast.parse(JOB.read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(target, "id", None) for target in node.targets] == ["STEPS"]:
            return node.value.value
    raise SystemExit("job.py has no STEPS")


def make_venv(version, venv_root):
    venv = Path(venv_root) / f"torch-{version}"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-cache-dir", f"torch=={version}", "numpy"],
                       check=True)
    return venv, python


def torch_facts(python):
    code = ("import json, os, sys, torch; "
            "print(json.dumps([torch.__version__, os.path.dirname(torch.__file__), sys.version.split()[0]]))")
    output = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def run_job(python, collector, trace_dir, cache_dir, store):
    env = dict(os.environ)
    env.update({
        "TORCH_TRACE": str(trace_dir),
        "TORCHINDUCTOR_CACHE_DIR": str(cache_dir),
        "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
        "TORCHINDUCTOR_COMPILE_THREADS": "1",  # no compile worker pool: fewer processes, less CPU
        "OMP_NUM_THREADS": "1",
        "LD_PRELOAD": str(collector),
        "TORCHSCOPE_OUTPUT": str(store),
        "TORCHSCOPE_BRIDGE_DIR": str(ROOT / "collector" / "python"),
        "TORCHSCOPE_SUMMARY": "0",
    })
    env.pop("PYTHONPATH", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([str(python), str(JOB)], env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-4000:])
        raise SystemExit(f"job.py failed with exit code {result.returncode}")
    logs = sorted(Path(trace_dir).glob("*.log"), key=lambda path: path.stat().st_size)
    if not logs:
        raise SystemExit(f"no TORCH_TRACE log in {trace_dir}")
    return logs[-1], cpu


def trace_counts(events):
    kinds = [event.kind for event in events]
    cache_states = list(tracelog.fx_cache_states(events).values())
    return {
        "compiles": kinds.count("compilation_metrics"),
        "recompiles": kinds.count("artifact:recompile_reasons"),
        "graph_breaks": kinds.count("artifact:dynamo_graph_break_reason"),
        "restart_reasons": len(tracelog.restart_reasons(events)),
        "fx_cache_hits": cache_states.count("hit"),
        "fx_cache_misses": cache_states.count("miss"),
        "failed_compiles": sum(1 for event in events if event.kind == "compilation_metrics"
                               and event.metadata["compilation_metrics"].get("fail_type")),
    }


def store_facts(path):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        def count(sql):
            return db.execute(sql).fetchone()[0]

        run = db.execute("SELECT torch_version FROM run").fetchone() or ("",)
        diagnostics = [f"{source}/{severity}: {message}" for source, severity, message in
                       db.execute("SELECT source, severity, message FROM diagnostics ORDER BY id")]
        step_sources = sorted({source for (source,) in db.execute("SELECT DISTINCT source FROM steps")})
        return {
            "torch_version": run[0],
            "counts": {
                "compiles": count("SELECT COUNT(*) FROM compiles"),
                "recompiles": count("SELECT COUNT(*) FROM recompiles"),
                "graph_breaks": count("SELECT COUNT(*) FROM graph_breaks"),
                "graph_breaks_with_line": count("SELECT COUNT(*) FROM graph_breaks WHERE line > 0"),
                "steps": count("SELECT COUNT(*) FROM steps"),
                "fx_cache_hits": count("SELECT COUNT(*) FROM compiles WHERE cache_hit = 1"),
                "fx_cache_misses": count("SELECT COUNT(*) FROM compiles WHERE cache_hit = 0"),
                "recompile_limit_hits": count("SELECT COUNT(*) FROM recompiles WHERE limit_hit = 1"),
            },
            "step_sources": step_sources,
            "diagnostics": diagnostics,
        }


def bridge_hooked(store):
    """The bridge saw `import torch` and installed its hooks without an error."""
    failed = any(line.startswith("bridge/error") or "did not start" in line for line in store["diagnostics"])
    return bool(store["torch_version"]) and not failed


def record(python, collector, out, keep_raw=None):
    version, torch_dir, python_version = torch_facts(python)
    short = version.split("+")[0]
    out.mkdir(parents=True, exist_ok=True)
    entry = {"torch": version, "python": python_version, "torch_dir": torch_dir, "job": str(JOB),
             "job_steps": job_steps(), "markers": job_markers(), "runs": {}}
    with tempfile.TemporaryDirectory(prefix="torch-versions-") as scratch:
        scratch = Path(scratch)
        for run in RUNS:
            store = scratch / f"{run}.db"
            log, cpu = run_job(python, collector, scratch / f"trace-{run}", scratch / "inductor-cache", store)
            events = tracelog.read(log)
            fixture = out / f"torch-{short}-{run}.log.gz"
            tracelog.write(tracelog.shrink(events), fixture)
            facts = store_facts(store)
            if keep_raw:
                Path(keep_raw).mkdir(parents=True, exist_ok=True)
                shutil.copy(log, Path(keep_raw) / f"torch-{short}-{run}.log")
                shutil.copy(store, Path(keep_raw) / f"torch-{short}-{run}.db")
            entry["runs"][run] = {"log": fixture.name, "trace": trace_counts(events), "store": facts["counts"],
                                  "bridge_hooked": bridge_hooked(facts), "step_sources": facts["step_sources"],
                                  "diagnostics": facts["diagnostics"]}
            print(f"torch {version} {run}: {cpu:.1f} s CPU (job and children), {fixture.stat().st_size} bytes",
                  file=sys.stderr)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest[short] = entry
    ordered = dict(sorted(manifest.items(), key=lambda item: [int(part) for part in item[0].split(".")]))
    manifest_path.write_text(json.dumps(ordered, indent=2) + "\n")


def table(out):
    """The manifest as a Markdown table, one row per release: the store's counts against the trace's."""
    manifest = json.loads((out / "manifest.json").read_text())
    rows = ["| torch | bridge hooked | compiles | recompiles (limit hits) | graph breaks (at a user line) "
            "| steps | FX cache cold: misses, warm: hits |",
            "|---|---|---|---|---|---|---|"]
    for entry in manifest.values():
        runs = entry["runs"]
        cold, warm = runs["cold"], runs["warm"]
        store, trace = cold["store"], cold["trace"]
        breaks = f"{store['graph_breaks']}/{trace['graph_breaks']} ({store['graph_breaks_with_line']})"
        if not trace["graph_breaks"]:
            breaks += f", {trace['restart_reasons']} restart reasons"
        rows.append(
            f"| {entry['torch']} | {'yes' if all(run['bridge_hooked'] for run in runs.values()) else 'no'} "
            f"| {store['compiles']}/{trace['compiles']} "
            f"| {store['recompiles']}/{trace['recompiles']} ({store['recompile_limit_hits']}) "
            f"| {breaks} | {store['steps']} of {entry['job_steps']} ({', '.join(cold['step_sources'])}) "
            f"| {store['fx_cache_misses']}/{trace['fx_cache_misses']}, "
            f"{warm['store']['fx_cache_hits']}/{warm['trace']['fx_cache_hits']} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--torch", help="a torch release to install into a new virtual environment, e.g. 2.5.1")
    source.add_argument("--python", help="an interpreter that already has torch")
    source.add_argument("--table", action="store_true", help="print the manifest as a Markdown table")
    parser.add_argument("--venv-root", default=str(Path(tempfile.gettempdir()) / "torchscope-torch-versions"),
                        help="where --torch makes its environment (default: under the temporary directory)")
    parser.add_argument("--keep-venv", action="store_true", help="do not delete the environment made for --torch")
    parser.add_argument("--collector", default=str(DEFAULT_COLLECTOR), help="libtorchscope_collector.so")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="fixture directory")
    parser.add_argument("--keep-raw", metavar="DIR", help="also copy the unfiltered logs and the stores here")
    args = parser.parse_args()
    out = Path(args.out)
    if args.table:
        print(table(out))
        return
    collector = Path(args.collector).resolve()
    if not collector.exists():
        raise SystemExit(f"no collector library at {collector} (cmake --build build/dev --target torchscope_collector)")
    if args.python:
        record(Path(args.python), collector, out, args.keep_raw)
        return
    venv, python = make_venv(args.torch, args.venv_root)
    try:
        record(python, collector, out, args.keep_raw)
    finally:
        if not args.keep_venv:
            shutil.rmtree(venv, ignore_errors=True)


if __name__ == "__main__":
    main()
