"""Turns what torch reports about a compile into the fields of torchscope's store records.

Pure functions over torch's structured-trace metadata and payloads, written against the
formats of torch 2.5 to 2.13 (older keys are read when newer ones are missing). Nothing here
imports torch.
"""

import json
import os
import re

_SITE = re.compile(r"^Graph break in user code at (?P<file>.*):(?P<line>\d+)\s*$", re.M)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>.+?)\s*$', re.M)
_PREAMBLE = re.compile(r"^Encountered graph break when attempting to trace\b")
_GUARD_COMMENT = re.compile(r"\s{2,}#.*$")
_SECTION_ENDS = ("Hint:", "Developer debug context:", "For more details", "Stack variable source attribution")

_NS_PER_US = 1000
_NS_PER_S = 1_000_000_000


class Frame:
    __slots__ = ("file", "line", "function")

    def __init__(self, file, line, function):
        self.file, self.line, self.function = file, line, function

    def as_dict(self):
        return {"file": self.file, "line": self.line, "function": self.function}


def is_internal(path, internal_prefixes):
    """True for torch's own files (and the bridge's): not the user's code."""
    if path.startswith("<"):
        return True
    return any(path.startswith(prefix) for prefix in internal_prefixes)


def internal_prefixes(torch_module):
    """Directories whose frames are torch internals: torch itself and this bridge."""
    prefixes = [os.path.dirname(os.path.abspath(__file__)) + os.sep]
    torch_file = getattr(torch_module, "__file__", None)
    if torch_file:
        prefixes.append(os.path.dirname(os.path.abspath(torch_file)) + os.sep)
    return tuple(prefixes)


def user_frames(text, prefixes):
    """The frames of a rendered traceback that belong to the user, outermost first."""
    frames = []
    for match in _FRAME.finditer(text):
        if not is_internal(match["file"], prefixes):
            frames.append(Frame(match["file"], int(match["line"]), match["function"]))
    return frames


def _reason_block(payload):
    for marker in ("Graph Break Reason:", "Reason:"):
        start = payload.find(marker)
        if start >= 0:
            start += len(marker)
            end = payload.find("\nUser code traceback:", start)
            return payload[start:end if end >= 0 else len(payload)]
    return ""


def _split_reason(block):
    """(gb_type, explanation, hints, developer context) from torch's rendered break reason."""
    lines = [line.rstrip() for line in block.strip("\n").splitlines()]
    while lines and (not lines[0].strip() or _PREAMBLE.match(lines[0].strip())):
        lines.pop(0)
    if not lines:
        return "", "", [], ""
    gb_type = lines[0].strip()
    explanation, hints, context = [], [], ""
    section = None
    for raw in lines[1:]:
        line = raw.strip()
        if line.startswith("Explanation:"):
            section = explanation
            line = line[len("Explanation:"):].strip()
        elif line.startswith("Hint:"):
            hints.append(line[len("Hint:"):].strip())
            section = None
            continue
        elif line.startswith("Developer debug context:"):
            context = line[len("Developer debug context:"):].strip()
            section = None
            continue
        elif line.startswith(_SECTION_ENDS):
            section = None
            continue
        if section is not None and line:
            section.append(line)
    return gb_type, " ".join(explanation), hints, context


def graph_break(payload, prefixes):
    """Fields of a GraphBreak row from a `dynamo_graph_break_reason` artifact."""
    gb_type, explanation, hints, context = _split_reason(_reason_block(payload))
    traceback_at = payload.find("User code traceback:")
    stack = user_frames(payload[traceback_at:], prefixes) if traceback_at >= 0 else []
    site = _SITE.search(payload)
    file, line, function = "", -1, ""
    if site and not is_internal(site["file"], prefixes):
        file, line = site["file"], int(site["line"])
        for frame in reversed(stack):
            if frame.file == file and frame.line == line:
                function = frame.function
                break
    elif stack:
        # The break happened inside torch: the user's line is the innermost of their frames.
        file, line, function = stack[-1].file, stack[-1].line, stack[-1].function
    return {
        "break_type": gb_type,
        "reason": context or gb_type,
        "explanation": explanation,
        "hints": hints,
        "file": file,
        "line": line,
        "function": function,
        "user_stack": [frame.as_dict() for frame in stack],
    }


def guard_failures(payload):
    """The failing guard texts of a `recompile_reasons` artifact, most recent cache entry first."""
    if isinstance(payload, list):
        reasons = payload
    else:
        try:
            reasons = json.loads(payload)
        except (TypeError, ValueError):
            reasons = [payload]
        if not isinstance(reasons, list):
            reasons = [reasons]
    guards = []
    for reason in reasons:
        text = str(reason).split("\nUser stack trace:", 1)[0]
        first, *rest = text.splitlines() or [""]
        guards.append("\n".join([_GUARD_COMMENT.sub("", first)] + rest).strip())
    return [guard for guard in guards if guard]


def _first(metrics, *keys):
    for key in keys:
        value = metrics.get(key)
        if value is not None:
            return value
    return None


def _nanos(metrics, us_key, s_key):
    value = metrics.get(us_key)
    if value is not None:
        return int(value) * _NS_PER_US
    value = metrics.get(s_key)
    if value is not None:
        return int(float(value) * _NS_PER_S)
    return -1


def _integer(value, default=-1):
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def compile_record(metrics, ids, wall_to_monotonic_ns, cache_hit=-1):
    """Fields of a Compile row from a `compilation_metrics` event.

    ids: frame_id, frame_compile_id, attempt (and compiled_autograd_id) from the event's envelope.
    wall_to_monotonic_ns: offset that turns torch's wall-clock start time into the store's clock.
    """
    dynamo_ns = _nanos(metrics, "dynamo_cumulative_compile_time_us", "entire_frame_compile_time_s")
    start_us = _first(metrics, "start_time_us")
    if start_us is not None:
        start_ns = int(start_us) * _NS_PER_US + wall_to_monotonic_ns
    elif metrics.get("start_time") is not None:
        start_ns = int(float(metrics["start_time"]) * _NS_PER_S) + wall_to_monotonic_ns
    else:
        start_ns = 0
    duration_us = metrics.get("duration_us")
    end_ns = start_ns + (int(duration_us) * _NS_PER_US if duration_us is not None else max(dynamo_ns, 0))
    restart_reasons = [str(reason) for reason in (metrics.get("restart_reasons") or [])]
    fail_type = metrics.get("fail_type") or ""
    op_count = _integer(metrics.get("graph_op_count"))
    if fail_type:
        status = "failed"
    elif metrics.get("has_guarded_code") is False:
        status = "skipped"
    else:
        status = "ok"
    return {
        "frame_id": _integer(ids.get("frame_id")),
        "frame_compile_id": _integer(ids.get("frame_compile_id")),
        "attempt": _integer(ids.get("attempt"), 0),
        "compiled_autograd_id": _integer(ids.get("compiled_autograd_id")),
        "co_name": metrics.get("co_name") or "",
        "co_filename": metrics.get("co_filename") or "",
        "co_firstlineno": _integer(metrics.get("co_firstlineno")),
        "start_ns": start_ns,
        "end_ns": end_ns,
        "dynamo_ns": dynamo_ns,
        "aot_ns": _nanos(metrics, "aot_autograd_cumulative_compile_time_us", "backend_compile_time_s"),
        "inductor_ns": _nanos(metrics, "inductor_cumulative_compile_time_us", "inductor_compile_time_s"),
        "graph_count": -1 if op_count < 0 else int(op_count > 0),
        "graph_op_count": op_count,
        "graph_node_count": _integer(metrics.get("graph_node_count")),
        "guard_count": _integer(metrics.get("guard_count")),
        "cache_size": _integer(metrics.get("cache_size")),
        "cache_hit": cache_hit,
        "status": status,
        "fail_type": fail_type,
        "fail_reason": metrics.get("fail_reason") or "",
        "restart_reasons": restart_reasons,
    }


_LIMIT_FUNCTION = re.compile(r"function: '(?P<name>[^']*)' \((?P<file>.*):(?P<line>\d+)\)")


def limit_warning_site(message):
    """(co_name, co_filename, co_firstlineno) named by torch's recompile-limit warning, or None."""
    match = _LIMIT_FUNCTION.search(message)
    if not match:
        return None
    return match["name"], match["file"], int(match["line"])
