"""print-out-of-compiled[:FILE:LINE;...]: print, logging and warnings.warn statements in compiled code run only
when not compiling: `if not torch.compiler.is_compiling():` guards them, so eager runs still print.

Compiled code: functions decorated with torch.compile or passed to it in the module, and, with lines from the
findings, the statements on those lines wherever they are (a module's forward compiled by torch.compile(model)).
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import PositionProvider

from .common import Target, compiled_function_names, is_torch_compile, torch_alias

FIX_ID = "print-out-of-compiled"

LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}


def _logger_names(module: cst.Module) -> set[str]:
    """Names the module binds to logging.getLogger(...)."""
    names = {"logging"}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node):
            if isinstance(node.value, cst.Call) and get_full_name_for_node(node.value.func) == "logging.getLogger":
                names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

    module.visit(Finder())
    return names


def _is_output_call(line: cst.BaseStatement, loggers: set[str]) -> bool:
    """A line that is only print(...), warnings.warn(...) or logger.<level>(...)."""
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
        return False
    call = line.body[0].value
    if not isinstance(call, cst.Call):
        return False
    name = get_full_name_for_node(call.func) or ""
    receiver, _, method = name.rpartition(".")
    return name in ("print", "warnings.warn") or (method in LOG_METHODS and receiver in loggers)


class GuardOutput(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, compiled_names: set[str], lines: set[int], loggers: set[str], torch_name: str) -> None:
        super().__init__()
        self.compiled_names = compiled_names
        self.lines = lines
        self.loggers = loggers
        self.guard = cst.parse_expression(f"not {torch_name}.compiler.is_compiling()")
        self.depth = 0
        self.guarded_lines: set[int] = set()

    def _compiled(self, node: cst.FunctionDef) -> bool:
        if node.name.value in self.compiled_names:
            return True
        return any(is_torch_compile(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                   for d in node.decorators)

    def visit_FunctionDef(self, node):
        if self.depth or self._compiled(node):
            self.depth += 1

    def leave_FunctionDef(self, original, updated):
        if self.depth:
            self.depth -= 1
        return updated

    def _wanted(self, line: cst.BaseStatement) -> bool:
        if not _is_output_call(line, self.loggers):
            return False
        position = self.get_metadata(PositionProvider, line)
        named = any(position.start.line <= n <= position.end.line for n in self.lines)
        if named or self.depth:
            self.guarded_lines.update(range(position.start.line, position.end.line + 1))
            return True
        return False

    def leave_IndentedBlock(self, original, updated):
        # Children keep their places (nothing is removed), so original.body[i] is updated.body[i].
        body: list[cst.BaseStatement] = []
        run: list[cst.BaseStatement] = []
        for before, after in zip(original.body, updated.body):
            if self._wanted(before):
                run.append(after)
                continue
            body.extend(self._guarded(run))
            run = []
            body.append(after)
        body.extend(self._guarded(run))
        return updated.with_changes(body=body)

    def _guarded(self, run: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        if not run:
            return []
        first = run[0]
        run[0] = first.with_changes(leading_lines=[])
        return [cst.If(test=self.guard, body=cst.IndentedBlock(body=run), leading_lines=first.leading_lines)]


def apply(module: cst.Module, target: Target) -> cst.Module:
    lines = set(target.lines())
    compiled = compiled_function_names(module)
    torch_name = torch_alias(module)
    if torch_name is None:
        for line in sorted(lines):
            target.refuse(FIX_ID, line, "torch is not imported in this file, so torch.compiler.is_compiling() "
                                        "cannot guard the call")
        return module
    guard = GuardOutput(compiled, lines, _logger_names(module), torch_name)
    rewritten = cst.MetadataWrapper(module).visit(guard)
    for line in sorted(lines - guard.guarded_lines):
        target.refuse(FIX_ID, line, "no print, logging or warnings.warn statement of its own on that line "
                                    "(a call inside an expression cannot be guarded alone)")
    return rewritten
