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
    file: str            # the user's line of the break
    line: int
    break_type: str
    stack: list[tuple[str, int]]  # torch's traceback, library frames kept: where torch broke is on it


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
    file: str            # the user's line the finding names
    line: int
    function: str
    count: int
    # What the evidence names besides: every recompiled frame with its own count (file, first line, recompiles),
    # the library frame (where torch broke or recompiled outside the user's code), the break types with counts.
    frames: list[tuple[str, int, int]] = dataclasses.field(default_factory=list)
    library_frame: tuple[str, int] | None = None
    breaks: list[tuple[str, int]] = dataclasses.field(default_factory=list)

    def sites(self) -> list[tuple[str, int]]:
        """What the finding is about: the recompiled frames when the evidence names them (the location is then the
        line to change, shared by every frame called from it); else the location and the library frame."""
        if self.frames:
            return [(file, line) for file, line, _ in self.frames]
        return [(self.file, self.line)] + ([self.library_frame] if self.library_frame else [])


@dataclasses.dataclass
class TorchscopeView:
    breaks: list[StoredBreak]
    recompiles: list[StoredRecompile]
    findings: list[Finding]  # graph-break/* and recompile/* only: the families torch's log can confirm
    advise_error: str = ""
    compile_seconds: dict[str, float] = dataclasses.field(default_factory=dict)  # by compile id, from the store
    duration_seconds: float = 0.0  # the run's wall time as advise reports it (its impact thresholds' base)


def _compile_id(frame_id: int, frame_compile_id: int, attempt: int = 0) -> str:
    return f"{frame_id}/{frame_compile_id}" + (f"_{attempt}" if attempt else "")


def stores_of(store: Path) -> list[Path]:
    """The job's store and those of its other processes (RUN.<pid>.db next to it)."""
    return [store] + sorted(store.parent.glob(f"{store.stem}.*.db"))


def _frames(stack: str) -> list[tuple[str, int]]:
    try:
        return [(frame.get("file") or "", int(frame.get("line") or -1)) for frame in json.loads(stack or "[]")]
    except (ValueError, AttributeError):
        return []


def _site(location) -> tuple[str, int] | None:
    if not isinstance(location, dict) or not location.get("file"):
        return None
    return location["file"], int(location.get("line") or -1)


def read_stores(stores: list[Path]) -> tuple[list[StoredBreak], list[StoredRecompile], dict[str, float]]:
    breaks, recompiles, compile_seconds = [], [], {}
    for store in stores:
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            for frame, compile_id, seconds in db.execute(
                    "SELECT frame_id, frame_compile_id, sum(max(end_ns - start_ns, 0)) / 1e9 FROM compiles "
                    "GROUP BY frame_id, frame_compile_id"):
                key = _compile_id(frame, compile_id)
                compile_seconds[key] = compile_seconds.get(key, 0.0) + seconds
            for frame, compile_id, attempt, file, line, break_type, stack in db.execute(
                    "SELECT frame_id, frame_compile_id, attempt, file, line, break_type, stack FROM graph_breaks "
                    "ORDER BY id"):
                breaks.append(StoredBreak(_compile_id(frame, compile_id, attempt), file, line, break_type,
                                          _frames(stack)))
            for frame, compile_id, function, file, line, cause, limit_hit in db.execute(
                    "SELECT frame_id, frame_compile_id, co_name, co_filename, co_firstlineno, cause, limit_hit "
                    "FROM recompiles ORDER BY id"):
                recompiles.append(StoredRecompile(_compile_id(frame, compile_id), function, file, line, cause,
                                                  bool(limit_hit)))
    return breaks, recompiles, compile_seconds


def advise(torchscope: str, stores: list[Path]) -> tuple[list[Finding], float, str]:
    result = subprocess.run([torchscope, "advise", *map(str, stores), "--format", "json"],
                            capture_output=True, text=True)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        return [], 0.0, f"advise exited {result.returncode}: {result.stderr.strip()[-300:]}"
    findings = []
    for finding in report.get("findings", []):
        rule = finding.get("rule", "")
        if not rule.startswith(("graph-break/", "recompile/")):
            continue
        location = finding.get("location") or {}
        evidence = finding.get("evidence") or {}
        frames = [(frame.get("file") or "", int(frame.get("line") or -1), int(frame.get("recompiles") or 0))
                  for frame in evidence.get("frames") or []]
        breaks = [(kind.get("break_type") or "", int(kind.get("count") or 0)) for kind in evidence.get("breaks") or []]
        findings.append(Finding(rule, location.get("file") or "", location.get("line") or -1,
                                location.get("function") or "", int(finding.get("count") or 0), frames,
                                _site(evidence.get("library_frame")), breaks))
    duration = max((float(run.get("duration_seconds") or 0) for run in report.get("runs", [])), default=0.0)
    return findings, duration, ""


def view(torchscope: str, store: Path) -> TorchscopeView:
    stores = stores_of(store)
    breaks, recompiles, compile_seconds = read_stores(stores)
    findings, duration, error = advise(torchscope, stores)
    return TorchscopeView(breaks, recompiles, findings, error, compile_seconds, duration)
