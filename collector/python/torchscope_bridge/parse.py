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
_GB_ID = re.compile(r"/gb/gb(?P<number>\d+)\.html")
_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<function>.+)_at_\d+$")
# torch's own wording around the reason, not the reason.
_PREAMBLES = (
    re.compile(r"^Encountered graph break when attempting to trace\b"),
    re.compile(r"^Failed to handle graph break gracefully\b"),
)
_FRAME_SKIPPED = ("Failed to handle graph break gracefully", "cannot properly resume from this graph break")
_NESTED_BREAK = "*** While handling this graph break, another graph break occurred: ***"
_GUARD_COMMENT = re.compile(r"\s{2,}#.*$")
_SECTION_ENDS = ("Hint:", "Developer debug context:", "For more details", "Stack variable source attribution")
_TRACEBACKS = ("User code traceback:", "The graph break occurred in the following user code:")

_NS_PER_US = 1000
_NS_PER_S = 1_000_000_000


class Frame:
    __slots__ = ("file", "line", "function")

    def __init__(self, file, line, function):
        self.file, self.line, self.function = file, line, function

    def as_dict(self):
        return {"file": self.file, "line": self.line, "function": self.function}


def _within(path, root):
    root = root.rstrip(os.sep) or os.sep
    if root == os.sep:
        return path.startswith(os.sep)
    return path.startswith(root) and len(path) > len(root) and path[len(root)] == os.sep


# Where programs write the code they generate, right in the folder (store/src/UserCode.cpp, kTemporaryFolders).
_TEMPORARY_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")


class CodeScope:
    """Which files are the user's own code: the rule of store::CodeRoots (store/UserCode.h).

    The longest root that contains a file decides (a tie goes to the user root); a file under no
    root is the user's unless it is in an installed-package folder or right in a temporary folder (code a library
    generated there, e.g. torch_geometric's templates); without library roots the standard library and
    torch's folder count as library too; pseudo-files ("<frozen runpy>") never count.
    """

    def __init__(self, user_roots=(), library_roots=()):
        self.user_roots = tuple(root for root in user_roots if root)
        self.library_roots = tuple(root for root in library_roots if root)

    def _longest(self, path, roots):
        return max((len(root.rstrip(os.sep) or os.sep) for root in roots if _within(path, root)), default=0)

    def is_user(self, path):
        if not path or path.startswith("<"):
            return False
        as_user = self._longest(path, self.user_roots)
        as_library = self._longest(path, self.library_roots)
        if as_user or as_library:
            return as_user >= as_library
        if "/site-packages/" in path or "/dist-packages/" in path:
            return False
        if os.path.dirname(path) in _TEMPORARY_FOLDERS:
            return False
        return bool(self.library_roots) or ("/lib/python" not in path and "/torch/" not in path)


def scope_of(scope_or_prefixes):
    """A CodeScope as it is, or one whose library roots are the given directory prefixes."""
    if isinstance(scope_or_prefixes, CodeScope):
        return scope_or_prefixes
    return CodeScope((), tuple(scope_or_prefixes or ()))


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


def function_name(name):
    """The user's function of a Dynamo resume function ("torch_dynamo_resume_in_forward_at_41" -> "forward")."""
    match = _RESUME.match(name or "")
    return match["function"] if match else name


def frames(text):
    """Every frame of a rendered traceback, outermost first."""
    return [Frame(match["file"], int(match["line"]), match["function"]) for match in _FRAME.finditer(text)]


def user_frames(text, scope):
    """The frames of a rendered traceback that belong to the user, outermost first."""
    scope = scope_of(scope)
    return [frame for frame in frames(text) if scope.is_user(frame.file)]


def _traceback(payload):
    """The traceback torch rendered for the user's code, without torch's own exception traceback after it."""
    for marker in _TRACEBACKS:
        start = payload.find(marker)
        if start >= 0:
            start += len(marker)
            end = payload.find("\nTraceback (most recent call last):", start)
            return payload[start:end if end >= 0 else len(payload)]
    return ""


def _reason_block(payload):
    for marker in ("Graph Break Reason:", "Reason:"):
        start = payload.find(marker)
        if start >= 0:
            start += len(marker)
            end = payload.find("\nUser code traceback:", start)
            return payload[start:end if end >= 0 else len(payload)]
    # A frame torch skipped: the reason is the exception at the end of its traceback.
    start = payload.rfind("torch._dynamo.exc.Unsupported:")
    return payload[start + len("torch._dynamo.exc.Unsupported:"):] if start >= 0 else ""


def _is_preamble(line):
    return not line or any(pattern.match(line) for pattern in _PREAMBLES)


def _split_reason(block):
    """(gb_type, explanation, hints, developer context) of the first break in torch's rendered reason."""
    block = block.split(_NESTED_BREAK, 1)[0]
    lines = [line.rstrip() for line in block.strip("\n").splitlines()]
    while lines and _is_preamble(lines[0].strip()):
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


def graph_break(payload, scope):
    """Fields of a GraphBreak row from a `dynamo_graph_break_reason` artifact.

    scope: a CodeScope (or, as before, a tuple of torch's directory prefixes). `stack` keeps every
    frame of torch's user traceback; `file`/`line` are the innermost user frame, which is torch's
    break site when that site is the user's (the optimizer's own break is placed at the user's
    optimizer.step() call, and its real site stays the innermost frame of `stack`).
    """
    scope = scope_of(scope)
    gb_type, explanation, hints, context = _split_reason(_reason_block(payload))
    stack = frames(_traceback(payload))
    site = _SITE.search(payload)
    if site and not stack:
        stack = [Frame(site["file"], int(site["line"]), "")]
    user = [frame for frame in stack if scope.is_user(frame.file)]
    file, line, function = "", -1, ""
    if site and scope.is_user(site["file"]):
        file, line = site["file"], int(site["line"])
        for frame in reversed(user):
            if frame.file == file and frame.line == line:
                function = frame.function
                break
    elif user:
        file, line, function = user[-1].file, user[-1].line, user[-1].function
    gb_id = _GB_ID.search(payload)
    return {
        "break_type": gb_type,
        "reason": context or gb_type,
        "explanation": explanation,
        "hints": hints,
        "gb_id": f"GB{gb_id['number']}" if gb_id else "",
        "frame_skipped": 1 if any(marker in payload for marker in _FRAME_SKIPPED) else 0,
        "file": file,
        "line": line,
        "function": function_name(function),
        "user_stack": [frame.as_dict() for frame in user],
        "stack": [frame.as_dict() for frame in stack],
    }


def _reason_texts(payload):
    if isinstance(payload, list):
        return payload
    try:
        reasons = json.loads(payload)
    except (TypeError, ValueError):
        reasons = [payload]
    return reasons if isinstance(reasons, list) else [reasons]


def guard_reasons(payload):
    """The failing guards of a `recompile_reasons` artifact, most recent cache entry first: each
    {"guard": text without torch's trailing code comment, "stack": [Frame] where the guarded value was read}."""
    reasons = []
    for reason in _reason_texts(payload):
        text, _, stack_text = str(reason).partition("\nUser stack trace:")
        first, *rest = text.splitlines() or [""]
        guard = "\n".join([_GUARD_COMMENT.sub("", first)] + rest).strip()
        if guard:
            reasons.append({"guard": guard, "stack": frames(stack_text)})
    return reasons


def guard_failures(payload):
    """The failing guard texts of a `recompile_reasons` artifact, most recent cache entry first."""
    return [reason["guard"] for reason in guard_reasons(payload)]


_SCALAR_GUARD = re.compile(r"^(?:\d+/\d+:\s*)?(?P<expression>.+?) == (?P<value>[-+]?(?:\d|\.\d)\S*|True|False)\s*$")


def scalar_guard(guard):
    """The guarded expression of a guard on a Python number's or bool's value, as torch wrote it
    ("L['self'].param_groups[0]['lr']"), or None for any other guard (lengths and training flags included)."""
    match = _SCALAR_GUARD.match(guard.splitlines()[0] if guard else "")
    if not match:
        return None
    expression = match["expression"].strip()
    if expression.startswith("len(") or expression.endswith(".training"):
        return None
    return expression


_SCOPE_KEY = re.compile(r"""(?<![\w])[LG]\[(['"])(?P<name>[^'"]+)\1\]""")


def guarded_source(expression):
    """A guarded expression as the user wrote it: "L['self'].lr" -> "self.lr" (store::guardedSource)."""
    return _SCOPE_KEY.sub(lambda match: match["name"], expression).strip()


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
        # Inductor's message when it skipped the CUDA graphs the compile asked for ("skipping cudagraphs due to ...").
        "cudagraph_skip_reason": str(metrics.get("cudagraph_skip_reason") or ""),
    }


_LIMIT_FUNCTION = re.compile(r"function: '(?P<name>[^']*)' \((?P<file>.*):(?P<line>\d+)\)")


def limit_warning_site(message):
    """(co_name, co_filename, co_firstlineno) named by torch's recompile-limit warning, or None."""
    match = _LIMIT_FUNCTION.search(message)
    if not match:
        return None
    return match["name"], match["file"], int(match["line"])

