"""Leak evidence: which variable of the user's code keeps more memory alive step after step.

A training loop that leaks usually keeps references in Python: a loss summed without `.item()` or
`.detach()` keeps every step's autograd graph, a list keeps every step's outputs. The memory is
allocated by torch, far from the line that keeps it, so an allocation profiler points at the wrong
line. Instead, at a few sampled step ends (steps 1, 2, 4, 8, ... then every 64th, at most about twice a
second), the bridge measures the holders the user's frames on the stack can see: tensors with an autograd graph
(its node count) and lists, dicts, deques whose newest item is a tensor (their length), in the frames' locals and
one level of `self`'s attributes. A holder that grew over two sampled intervals in a row is reported with the line
that adds to it, found in the function's source (the `+=`, the `.append(...)`).
"""

import ast
import collections
import linecache

_GRAPH_NODE_CAP = 200_000
_CONTAINER_ITEM_CAP = 1_000_000
_REPEAT_EVERY = 64
# Past step 64 the samples are at least this far apart: on the development VM a sample costs a job's thread about 80 us
# (its code and data cold after the step), 0.08 % of a job of 1.5 ms steps sampled every 64th step.
_MIN_SPACING_NS = 500_000_000
_ADDING_METHODS = frozenset(("append", "extend", "insert", "appendleft", "add", "update", "setdefault"))
_CONTAINERS = (list, dict, collections.deque)


def is_sampled(step):
    """Steps 1, 2, 4, 8, ..., 64, then every 64th."""
    if step <= 0:
        return False
    return (step & (step - 1)) == 0 if step <= _REPEAT_EVERY else step % _REPEAT_EVERY == 0


def next_sampled(step, step_ns=0):
    """The first sampled step after `step`; past step 64, with steps of `step_ns` on average, the first one at least
    _MIN_SPACING_NS after it."""
    if step < _REPEAT_EVERY:
        return 1 if step <= 0 else 1 << step.bit_length()
    later = step + (_MIN_SPACING_NS // step_ns if step_ns > 0 else 0)
    return (later // _REPEAT_EVERY + 1) * _REPEAT_EVERY


def graph_size(grad_fn):
    """Autograd nodes reachable from grad_fn, up to a cap."""
    seen = {id(grad_fn)}
    pending = [grad_fn]
    while pending and len(seen) < _GRAPH_NODE_CAP:
        node = pending.pop()
        for child, _ in getattr(node, "next_functions", ()):
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                pending.append(child)
    return len(seen)


def _tensor_bytes(tensor):
    try:
        return tensor.untyped_storage().nbytes()
    except Exception:
        return 0


def _last_item(container):
    if isinstance(container, dict):
        return next(reversed(container.values()))
    return container[-1]


def holds_tensors(container, tensor_type):
    """A non-empty list, dict or deque whose newest item is a tensor (O(1): only the newest item is looked at)."""
    return 0 < len(container) <= _CONTAINER_ITEM_CAP and isinstance(_last_item(container), tensor_type)


def tensor_bytes(container, tensor_type):
    """Bytes of the distinct tensor storages a container holds (computed only for a holder being reported)."""
    items = container.values() if isinstance(container, dict) else container
    storages = {}
    for item in items:
        if isinstance(item, tensor_type):
            storages.setdefault(id(item.untyped_storage()), item)
    return sum(_tensor_bytes(tensor) for tensor in storages.values())


def measure(value, tensor_type):
    """(kind, size) of a value that can hold memory across steps, None otherwise."""
    if isinstance(value, tensor_type):
        grad_fn = value.grad_fn
        return ("autograd-graph", graph_size(grad_fn)) if grad_fn is not None else None
    if isinstance(value, _CONTAINERS) and holds_tensors(value, tensor_type):
        return "container", len(value)
    return None


def _candidates(frame_locals, tensor_type):
    """(name, value, (kind, size)) of the holders a frame can see."""
    for name, value in list(frame_locals.items()):
        measured = measure(value, tensor_type)
        if measured is not None:
            yield name, value, measured
        if name == "self":
            attributes = getattr(value, "__dict__", None)
            if isinstance(attributes, dict):
                for attribute, held in list(attributes.items()):
                    measured = measure(held, tensor_type)
                    if measured is not None:
                        yield f"self.{attribute}", held, measured


# --- the line that adds to a holder ---------------------------------------------------------------


def _parse(file):
    source = "".join(linecache.getlines(file))
    return ast.parse(source) if source else None


def _target_text(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _mentions(node, name):
    return any(_target_text(child) == name for child in ast.walk(node))


def _adds_to(node, name):
    """True when the statement or expression adds to `name`."""
    if isinstance(node, ast.AugAssign):
        return _target_text(node.target) == name
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if _target_text(target) == name and _mentions(node.value, name):
                return True  # total = total + loss
            if isinstance(target, ast.Subscript) and _target_text(target.value) == name:
                return True  # cache[key] = value
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in _ADDING_METHODS and _target_text(node.func.value) == name
    return False


def _scope_node(tree, first_line, function):
    if function == "<module>":
        return tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            lines = [node.lineno] + [decorator.lineno for decorator in node.decorator_list]
            if first_line in lines:
                return node
    return None


def _in_loop_lines(scope):
    lines = set()
    for node in ast.walk(scope):
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            for inner in ast.walk(node):
                if hasattr(inner, "lineno"):
                    lines.add(inner.lineno)
    return lines


def adding_line(file, first_line, function, name):
    """The line of `file` that adds to `name`: in the owning function first (a loop's line preferred),
    then anywhere in the file (an attribute appended to in another method). None when not found."""
    try:
        tree = _parse(file)
    except (SyntaxError, ValueError):
        return None
    if tree is None:
        return None
    for scope in (_scope_node(tree, first_line, function), tree):
        if scope is None:
            continue
        lines = sorted(node.lineno for node in ast.walk(scope) if _adds_to(node, name))
        if lines:
            looped = _in_loop_lines(scope)
            return next((line for line in lines if line in looped), lines[0])
    return None


# --- tracking between sampled steps ---------------------------------------------------------------


class Holders:
    """Sizes of the candidate holders at the sampled steps; reports the ones that keep growing."""

    def __init__(self, is_user_file, stack_of):
        self._is_user_file = is_user_file
        self._stack_of = stack_of
        self._history = {}  # (file, first line, function, name) -> [(step, size)]
        self._reported = {}  # same key -> size last reported

    def sample(self, step, frame, tensor_type):
        """Measures the holders of the user's frames from `frame` outwards; returns the new evidence."""
        evidence = []
        seen = set()
        while frame is not None:
            code = frame.f_code
            if self._is_user_file(code.co_filename):
                for name, value, (kind, size) in _candidates(frame.f_locals, tensor_type):
                    key = (code.co_filename, code.co_firstlineno, code.co_name, name)
                    seen.add(key)
                    found = self._observe(key, step, kind, size, frame)
                    if found is not None and kind == "container":
                        found["bytes"] = tensor_bytes(value, tensor_type)
                    if found is not None:
                        evidence.append(found)
            frame = frame.f_back
        for key in list(self._history):
            if key not in seen:
                del self._history[key]  # gone out of scope or freed: the growth did not last
        return evidence

    def _observe(self, key, step, kind, size, frame):
        history = self._history.setdefault(key, [])
        history.append((step, size))
        del history[:-3]
        if len(history) < 3 or not history[0][1] < history[1][1] < history[2][1]:
            return None
        if self._reported.get(key, -1) >= size:
            return None
        self._reported[key] = size
        file, first_line, function, name = key
        line = adding_line(file, first_line, function, name)
        return {"step": step, "kind": kind, "name": name, "file": file,
                "line": line if line is not None else frame.f_lineno, "function": function,
                "first_step": history[0][0], "size_before": history[0][1], "size_after": size,
                "bytes": -1, "stack": [f.as_dict() for f in self._stack_of(frame)]}
