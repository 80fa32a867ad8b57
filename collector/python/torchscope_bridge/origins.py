"""Where a Python value that a compiled function was called with comes from, read from the caller's source.

A guard on a Python number (`scale == 0.5`) names the compiled function's parameter; the user
needs the line that produced the number. The caller's line is parsed with `ast`: the argument
passed for that parameter, and when it is a plain name, the assignment to it just before the
call. Pure functions over source text; nothing here imports torch.
"""

import ast
import linecache

_TENSOR_READS = ("item", "tolist")
_trees = {}


def _tree(filename):
    if filename not in _trees:
        try:
            _trees[filename] = ast.parse("".join(linecache.getlines(filename)), filename)
        except (SyntaxError, ValueError, MemoryError):
            _trees[filename] = None
    return _trees[filename]


def _spans(node, line):
    return getattr(node, "lineno", line + 1) <= line <= getattr(node, "end_lineno", -1)


def _enclosing_scope(tree, line):
    """The innermost function whose body holds `line`, or the module."""
    scope = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _spans(node, line):
            if scope is tree or node.lineno >= scope.lineno:
                scope = node
    return scope


def _calls_at(scope, line):
    return [node for node in ast.walk(scope) if isinstance(node, ast.Call) and _spans(node, line)]


def _argument(calls, parameter, position):
    for call in calls:
        for keyword in call.keywords:
            if keyword.arg == parameter:
                return keyword.value
    for call in calls:
        for argument in call.args:
            if isinstance(argument, ast.Name) and argument.id == parameter:
                return argument
    if position is not None and position >= 0:
        for call in calls:
            positional = call.args
            if len(positional) > position and not any(isinstance(arg, ast.Starred) for arg in positional[:position + 1]):
                return positional[position]
    return None


def _reads_tensor(node):
    return any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _TENSOR_READS
               for call in ast.walk(node))


def _assigned_value(scope, name, line):
    """The value last assigned to `name` at or before `line` (the first one after it when none is before)."""
    before, after = None, None
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            targets = [target for target in node.targets if isinstance(target, ast.Name) and target.id == name]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = [node.target] if isinstance(node.target, ast.Name) and node.target.id == name else []
        else:
            continue
        if not targets or node.value is None:
            continue
        if node.lineno <= line and (before is None or node.lineno >= before.lineno):
            before = node
        elif node.lineno > line and (after is None or node.lineno < after.lineno):
            after = node
    return before or after


def argument_origin(filename, call_line, parameter, position=None):
    """(kind, line) for the value the call at `filename:call_line` passes as `parameter`:
    ("item", line of the `.item()`/`.tolist()` that produced it) or ("argument", call_line);
    None when the caller's source cannot be read. `position`: the parameter's index among the
    positional arguments, for a call that passes it under another name."""
    tree = _tree(filename)
    if tree is None:
        return None
    scope = _enclosing_scope(tree, call_line)
    argument = _argument(_calls_at(scope, call_line), parameter, position)
    if argument is None:
        return None
    if _reads_tensor(argument):
        return "item", call_line
    if isinstance(argument, ast.Name):
        assignment = _assigned_value(scope, argument.id, call_line)
        if assignment is not None and _reads_tensor(assignment.value):
            return "item", assignment.lineno
    return "argument", call_line
