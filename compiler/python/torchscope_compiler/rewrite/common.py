"""Helpers the rewrites share: what a fix is aimed at, and facts about the module being rewritten."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.helpers import get_full_name_for_node


@dataclass
class Target:
    """One file being rewritten: the fix's argument, the file's paths, and the notes of fixes that left it alone."""

    arg: str = ""
    relative_path: str = ""
    absolute_path: str = ""
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[int]:
        """The lines of this file that the argument ("FILE:LINE;FILE:LINE...") names."""
        return locations(self.arg, self.relative_path, self.absolute_path)

    def refuse(self, fix_id: str, line: int, why: str) -> None:
        self.notes.append(f"{fix_id}: {self.relative_path}:{line} left alone: {why}")


def is_torch_compile(node: cst.CSTNode) -> bool:
    return get_full_name_for_node(node) in ("torch.compile", "compile")


def comma() -> cst.Comma:
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, spaced as PEP 8 spaces keyword arguments."""
    return cst.Arg(keyword=cst.Name(name), value=value,
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def append_arg(args: list[cst.Arg], arg: cst.Arg) -> list[cst.Arg]:
    if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=comma())
    return [*args, arg]


def compiled_function_names(module: cst.Module) -> set[str]:
    """Names passed as the first argument of torch.compile(...) anywhere in the module."""
    names: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node):
            if get_full_name_for_node(node.func) == "torch.compile" and node.args \
                    and isinstance(node.args[0].value, cst.Name):
                names.add(node.args[0].value.value)

    module.visit(Finder())
    return names


def torch_alias(module: cst.Module) -> str | None:
    """The name `import torch` (or `import torch as th`, `import torch.nn`) binds at module level."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Import):
                continue
            for alias in small.names:
                name = get_full_name_for_node(alias.name) or ""
                if alias.asname is None and name.split(".")[0] == "torch":
                    return "torch"
                if alias.asname is not None and name == "torch" and isinstance(alias.asname.name, cst.Name):
                    return alias.asname.name.value
    return None


def locations(arg: str, relative_path: str, absolute_path: str) -> list[int]:
    """The lines of `arg` ("FILE:LINE;FILE:LINE...") that name this file: one path ends the other."""
    lines = []
    for location in filter(None, (entry.strip() for entry in arg.split(";"))):
        file, _, line = location.rpartition(":")
        if not line.isdigit():
            continue
        named = [p for p in file.replace("\\", "/").split("/") if p not in ("", ".")]
        relative = [p for p in relative_path.replace("\\", "/").split("/") if p not in ("", ".")]
        absolute = [p for p in absolute_path.replace("\\", "/").split("/") if p not in ("", ".")]
        if named and (absolute[-len(named):] == named or named[-len(relative):] == relative):
            lines.append(int(line))
    return lines


def unused_name(module: cst.Module, base: str) -> str:
    used: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node):
            used.add(node.value)

    module.visit(Names())
    return next(name for name in (base, *(f"{base}_{n}" for n in range(2, 1000))) if name not in used)


class ScopeVisitor(cst.CSTVisitor):
    """A visitor that knows the function (or the module) each node it visits is in: `self.scope`."""

    def __init__(self) -> None:
        super().__init__()
        self._scopes: list[cst.FunctionDef | cst.Module] = []

    @property
    def scope(self) -> cst.FunctionDef | cst.Module:
        return self._scopes[-1]

    def visit_Module(self, node):
        self._scopes.append(node)

    def visit_FunctionDef(self, node):
        self._scopes.append(node)

    def leave_FunctionDef(self, original):
        self._scopes.pop()
