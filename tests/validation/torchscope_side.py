"""What torchscope made of the same run: the store's rows (what the collector captured) and the findings of
`torchscope advise --format json` (what the user is told)."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import subprocess
from pathlib import Path


@dataclasses.dataclass
class StoredBreak:
    compile_id: str      # "frame/compile", with "_attempt" when the attempt is not 0, as torch prints it
    file: str
    line: int
    break_type: str


@dataclasses.dataclass
class StoredRecompile:
    compile_id: str
    function: str
    file: str
    line: int
    cause: str
    limit_hit: bool


@dataclasses.dataclass
class Finding:
    rule: str
    file: str
    line: int
    function: str
    count: int


@dataclasses.dataclass
class TorchscopeView:
    breaks: list[StoredBreak]
    recompiles: list[StoredRecompile]
    findings: list[Finding]  # graph-break/* and recompile/* only: the families torch's log can confirm
    advise_error: str = ""


def _compile_id(frame_id: int, frame_compile_id: int, attempt: int = 0) -> str:
    return f"{frame_id}/{frame_compile_id}" + (f"_{attempt}" if attempt else "")


def stores_of(store: Path) -> list[Path]:
    """The job's store and those of its other processes (RUN.<pid>.db next to it)."""
    return [store] + sorted(store.parent.glob(f"{store.stem}.*.db"))


def read_stores(stores: list[Path]) -> tuple[list[StoredBreak], list[StoredRecompile]]:
    breaks, recompiles = [], []
    for store in stores:
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            for frame, compile_id, attempt, file, line, break_type in db.execute(
                    "SELECT frame_id, frame_compile_id, attempt, file, line, break_type FROM graph_breaks ORDER BY id"):
                breaks.append(StoredBreak(_compile_id(frame, compile_id, attempt), file, line, break_type))
            for frame, compile_id, function, file, line, cause, limit_hit in db.execute(
                    "SELECT frame_id, frame_compile_id, co_name, co_filename, co_firstlineno, cause, limit_hit "
                    "FROM recompiles ORDER BY id"):
                recompiles.append(StoredRecompile(_compile_id(frame, compile_id), function, file, line, cause,
                                                  bool(limit_hit)))
    return breaks, recompiles


def advise(torchscope: str, stores: list[Path]) -> tuple[list[Finding], str]:
    result = subprocess.run([torchscope, "advise", *map(str, stores), "--format", "json"],
                            capture_output=True, text=True)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        return [], f"advise exited {result.returncode}: {result.stderr.strip()[-300:]}"
    findings = []
    for finding in report.get("findings", []):
        rule = finding.get("rule", "")
        if not rule.startswith(("graph-break/", "recompile/")):
            continue
        location = finding.get("location") or {}
        findings.append(Finding(rule, location.get("file") or "", location.get("line") or -1,
                                location.get("function") or "", int(finding.get("count") or 0)))
    return findings, ""


def view(torchscope: str, store: Path) -> TorchscopeView:
    stores = stores_of(store)
    breaks, recompiles = read_stores(stores)
    findings, error = advise(torchscope, stores)
    return TorchscopeView(breaks, recompiles, findings, error)
