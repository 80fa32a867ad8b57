"""Source fixes: formatting-preserving rewrites of the user's Python files with LibCST.

    python -m torchscope_compiler.rewrite --fix ID[:ARG][,ID...] [--root DIR] [--in-place] FILE...
    python -m torchscope_compiler.rewrite --list

Prints a unified diff (paths relative to --root, default the current directory, with a/ and b/
prefixes) of what the fixes change; --in-place also writes the changed files. A file that does
not parse is left alone and named on stderr. Exit code 0, or 2 for bad arguments.

Each fix id (shared with the analyzer's fix.id) is a module of this package, listed in registry.py;
its docstring says what it rewrites. A fix aimed at FILE:LINE that cannot rewrite that line says why
on stderr, one line each.
"""

from __future__ import annotations

import difflib

import libcst as cst

from .common import Target
from .registry import REWRITES, SOURCE_FIXES

__all__ = ["SOURCE_FIXES", "rewrite_source", "unified_diff"]


def rewrite_source(source: str, fixes: list[tuple[str, str]], relative_path: str = "", absolute_path: str = "",
                   notes: list[str] | None = None) -> str:
    """Applies the fixes, in order, to one file's text; raises cst.ParserSyntaxError on bad Python.

    The paths say which file this is (fixes aimed at a FILE:LINE); `notes` gets why a fix aimed at
    this file left it alone.
    """
    module = cst.parse_module(source)
    notes = notes if notes is not None else []
    for fix_id, arg in fixes:
        module = REWRITES[fix_id](module, Target(arg, relative_path, absolute_path, notes))
    return module.code


def unified_diff(old: str, new: str, relative_path: str) -> str:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{relative_path}", tofile=f"b/{relative_path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
