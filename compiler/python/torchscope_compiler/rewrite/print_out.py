"""print-out-of-compiled: print(...) statements removed from the functions torch.compile compiles."""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from .common import Target, compiled_function_names, is_torch_compile

FIX_ID = "print-out-of-compiled"


class PrintOutOfCompiled(cst.CSTTransformer):
    def __init__(self, compiled_names: set[str]) -> None:
        super().__init__()
        self.compiled_names = compiled_names
        self.depth = 0

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

    def leave_SimpleStatementLine(self, original, updated):
        if not self.depth or len(updated.body) != 1 or not isinstance(updated.body[0], cst.Expr):
            return updated
        call = updated.body[0].value
        if isinstance(call, cst.Call) and get_full_name_for_node(call.func) == "print":
            return cst.RemoveFromParent()
        return updated

    def leave_IndentedBlock(self, original, updated):
        if not updated.body:
            return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated



def apply(module: cst.Module, target: Target) -> cst.Module:
    return module.visit(PrintOutOfCompiled(compiled_function_names(module)))
