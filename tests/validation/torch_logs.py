"""Reads torch's own log of a run (TORCH_LOGS=graph_breaks,recompiles on stderr): the suite's reference.

Every line torch logs starts with a glog header (`V1122 23:38:05.578000 16960 /path/file.py:5124] `), then
the compile id (`[0/1]`) and the logger's tag (`[__graph_breaks]`, `[__recompiles]`); a multi-line message
repeats the same header on each line, which is how its lines are told apart from the job's own output.

A graph-break entry is one `Graph break in user code at F:L` message (or its short form for a repeated break,
`Graph break (user stack suppressed due to duplicate graph break) in user code at F:L`): torch logs one per
frame compilation that broke. A recompile entry is one `Recompiling function NAME in F:FIRSTLINE` message with
its guard failures. A limit hit is torch's `hit config.recompile_limit` warning. The stack at the start of each
compilation comes from torch's structured trace of the same run (TORCH_TRACE), which that log does not print.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re

_HEADER = re.compile(r"^(?P<header>[VIWEC]\d{4} [\d:.]+ +(?P<pid>\d+) \S+:\d+\] )(?P<rest>.*)$")
_TAGGED = re.compile(r"^\[(?P<compile_id>[^\]]+)\] \[__(?P<tag>\w+)\] ?(?P<text>.*)$")
_BREAK_SITE = re.compile(r"^Graph break (?:\(user stack suppressed due to duplicate graph break\) )?"
                         r"in user code at (?P<file>.+):(?P<line>\d+)\s*$")
_RECOMPILE = re.compile(r"^Recompiling function (?P<function>\S+) in (?P<file>.+):(?P<line>\d+)\s*$")
_GUARD = re.compile(r"^\s*- (?P<entry>\d+/\d+): (?P<guard>.*)$")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>.+?)\s*$')
_LIMIT = re.compile(r"hit config\.(?:recompile_limit|cache_size_limit) \((?P<limit>\d+)\)")
_LIMIT_FUNCTION = re.compile(r"function: '(?P<function>[^']*)' \((?P<file>.+):(?P<line>\d+)\)")
_SKIPPED_PREAMBLE = "Failed to handle graph break gracefully"
_PREAMBLES = ("Encountered graph break when attempting to trace", _SKIPPED_PREAMBLE)


@dataclasses.dataclass
class Frame:
    file: str
    line: int
    function: str


@dataclasses.dataclass
class GraphBreak:
    compile_id: str
    pid: int
    file: str            # torch's site: where tracing stopped, possibly inside torch
    line: int
    gb_type: str         # torch's graph-break type (the first one when a second break happened while handling it)
    explanation: str
    traceback: list[Frame]  # torch's "User code traceback", outermost first; empty when torch suppressed it
    duplicate: bool      # torch's short form for a break it has already logged with its stack
    frame_skipped: bool = False  # torch could not resume after the break and ran the rest of the frame eagerly


@dataclasses.dataclass
class Recompile:
    compile_id: str
    pid: int
    function: str
    file: str
    line: int            # the code object's first line
    guard_failures: list[str]  # one per cache entry that failed, most recent entry first
    failed_entries: list[str] = dataclasses.field(default_factory=list)  # their compile ids ("0/1"), in that order


@dataclasses.dataclass
class LimitHit:
    pid: int
    function: str
    file: str
    line: int
    limit: int


@dataclasses.dataclass
class TorchLog:
    graph_breaks: list[GraphBreak]
    recompiles: list[Recompile]
    limit_hits: list[LimitHit]


def _messages(text: str):
    """(header, pid, compile id, tag, lines) for each logged message, in order."""
    current = None
    for raw in text.splitlines():
        match = _HEADER.match(raw)
        if not match:
            continue  # the job's own output
        tagged = _TAGGED.match(match["rest"])
        compile_id, tag, body = (tagged["compile_id"], tagged["tag"], tagged["text"]) if tagged else ("", "", match["rest"])
        if current is not None and current[0] == match["header"] and current[2] == compile_id and current[3] == tag:
            current[4].append(body)
            continue
        if current is not None:
            yield current
        current = (match["header"], int(match["pid"]), compile_id, tag, [body])
    if current is not None:
        yield current


def _gb_type(lines: list[str]) -> tuple[str, str]:
    """torch's graph-break type and explanation: the first non-empty reason line that is not a preamble."""
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Graph Break Reason:"))
    except StopIteration:
        return "", ""
    first = lines[start][len("Graph Break Reason:"):].strip()
    candidates = ([first] if first else []) + [line.strip() for line in lines[start + 1:]]
    gb_type, explanation = "", ""
    for i, line in enumerate(candidates):
        if not line or line.startswith(_PREAMBLES):
            continue
        gb_type = line.rstrip(":")
        for follow in candidates[i + 1:]:
            if follow.startswith("Explanation:"):
                explanation = follow[len("Explanation:"):].strip()
                break
        break
    return gb_type, explanation


def _traceback(lines: list[str]) -> list[Frame]:
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "User code traceback:")
    except StopIteration:
        return []
    frames = []
    for line in lines[start + 1:]:
        match = _FRAME.match(line)
        if match:
            frames.append(Frame(match["file"], int(match["line"]), match["function"]))
    return frames


def _graph_break(pid: int, compile_id: str, lines: list[str]) -> GraphBreak | None:
    site = _BREAK_SITE.match(lines[0])
    if not site:
        return None
    gb_type, explanation = _gb_type(lines)
    return GraphBreak(compile_id=compile_id, pid=pid, file=site["file"], line=int(site["line"]), gb_type=gb_type,
                      explanation=explanation, traceback=_traceback(lines),
                      duplicate=lines[0].startswith("Graph break (user stack suppressed"),
                      frame_skipped=any(_SKIPPED_PREAMBLE in line for line in lines))


def _recompile(pid: int, compile_id: str, lines: list[str]) -> Recompile | None:
    header = _RECOMPILE.match(lines[0])
    if not header:
        return None
    guards, entries = [], []
    for line in lines[1:]:
        match = _GUARD.match(line)
        if match:
            guards.append(match["guard"].split("  #", 1)[0].strip())  # torch appends the guarded source as a comment
            entries.append(match["entry"])
    return Recompile(compile_id=compile_id, pid=pid, function=header["function"], file=header["file"],
                     line=int(header["line"]), guard_failures=guards, failed_entries=entries)


def _limit_hit(pid: int, lines: list[str]) -> LimitHit | None:
    text = "\n".join(lines)
    limit, function = _LIMIT.search(text), _LIMIT_FUNCTION.search(text)
    if not limit or not function:
        return None
    return LimitHit(pid=pid, function=function["function"], file=function["file"], line=int(function["line"]),
                    limit=int(limit["limit"]))


def parse(text: str) -> TorchLog:
    log = TorchLog([], [], [])
    for _, pid, compile_id, tag, lines in _messages(text):
        if tag == "graph_breaks":
            entry = _graph_break(pid, compile_id, lines)
            if entry:
                log.graph_breaks.append(entry)
        elif tag in ("recompiles", "recompiles_verbose"):
            entry = _recompile(pid, compile_id, lines)
            if entry:
                log.recompiles.append(entry)
        elif any(_LIMIT.search(line) for line in lines):
            entry = _limit_hit(pid, lines)
            if entry:
                log.limit_hits.append(entry)
    _fill_suppressed_tracebacks(log.graph_breaks, {})
    return log


def _fill_suppressed_tracebacks(breaks: list[GraphBreak], stacks: dict[str, list[Frame]]) -> None:
    """A repeated break is logged without its stack: it is the stack of the first entry at the same site, with the
    frames that its own compilation's stack (the `dynamo_start` callers) also has, same file and function in order,
    taken from that stack: the same break reached from another line of the caller (training, then evaluation)."""
    first_stack: dict[tuple[str, int], list[Frame]] = {}
    for entry in breaks:
        site = (entry.file, entry.line)
        if entry.traceback and not entry.duplicate:
            first_stack.setdefault(site, entry.traceback)
            continue
        entry.traceback = _with_callers(first_stack.get(site, []), stacks.get(entry.compile_id, [])[:-1])


def _with_callers(stack: list[Frame], callers: list[Frame]) -> list[Frame]:
    result, next_caller = [], 0
    for frame in stack:
        match = next((i for i in range(next_caller, len(callers))
                      if (callers[i].file, callers[i].function) == (frame.file, frame.function)), None)
        if match is None:
            result.append(frame)
        else:
            result.append(callers[match])
            next_caller = match + 1
    return result


def complete_tracebacks(log: TorchLog, stacks: dict[str, list[Frame]]) -> None:
    """Gives each repeated break the lines of its own callers, from the compilations' stacks (compile_stacks)."""
    _fill_suppressed_tracebacks(log.graph_breaks, stacks)


def compile_stacks(trace_text: str) -> dict[str, list[Frame]]:
    """The Python stack at the start of each compilation (`dynamo_start` events of torch's structured trace,
    TORCH_TRACE), by compile id, outermost frame first: for a recompiled frame, the user's line that called it."""
    strings: dict[int, str] = {}
    stacks: dict[str, list[Frame]] = {}
    for line in trace_text.splitlines():
        start = line.find("] {")
        if line.startswith("\t") or start < 0:
            continue  # payload lines
        try:
            event = json.loads(line[start + 2:])
        except ValueError:
            continue
        if "str" in event:
            text, index = event["str"]
            strings[index] = text
        elif "dynamo_start" in event:
            compile_id = f"{event.get('frame_id')}/{event.get('frame_compile_id')}"
            stacks[compile_id] = [Frame(strings.get(frame.get("filename"), str(frame.get("filename"))),
                                        int(frame.get("line", -1)), frame.get("name", ""))
                                  for frame in event["dynamo_start"].get("stack", [])]
    return stacks


def torch_directory() -> str:
    """torch's installation directory, without importing torch (its import takes seconds)."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    return os.path.dirname(spec.origin) + os.sep if spec and spec.origin else ""
