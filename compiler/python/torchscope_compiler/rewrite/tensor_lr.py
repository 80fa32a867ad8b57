"""tensor-lr: torch.optim.X(params, lr=0.01) -> lr=torch.tensor(0.01), so a scheduler's changes do not recompile."""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from .common import Target

FIX_ID = "tensor-lr"

OPTIMIZERS = {
    "SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Rprop", "NAdam", "RAdam",
    "ASGD", "SparseAdam", "LBFGS", "Adafactor",
}



def _numeric_names(module: cst.Module) -> set[str]:
    """Names only ever assigned a number literal in the module: safe to wrap in torch.tensor()."""
    numeric: set[str] = set()
    other: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    is_number = isinstance(node.value, (cst.Float, cst.Integer))
                    (numeric if is_number else other).add(target.target.value)

    module.visit(Finder())
    return numeric - other


class TensorLr(cst.CSTTransformer):
    """Wraps a float lr in torch.tensor(); values that may already be tensors are left alone."""

    def __init__(self, numeric_names: set[str]) -> None:
        super().__init__()
        self.numeric_names = numeric_names

    def _is_float_value(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, (cst.Float, cst.Integer)):
            return True
        name = get_full_name_for_node(value) or ""
        last = name.split(".")[-1]
        return bool(last) and (last.isupper() or name in self.numeric_names)

    def leave_Call(self, original, updated):
        name = get_full_name_for_node(updated.func) or ""
        parts = name.split(".")
        if parts[-1] not in OPTIMIZERS or (len(parts) > 1 and parts[-2] != "optim"):
            return updated
        args = list(updated.args)
        for index, arg in enumerate(args):
            is_lr = (arg.keyword is not None and arg.keyword.value == "lr") or (
                arg.keyword is None and arg.star == "" and index == 1)
            if not is_lr or not self._is_float_value(arg.value):
                continue
            value = arg.value
            if not isinstance(value, cst.Float):
                value = cst.Call(func=cst.Name("float"), args=[cst.Arg(value)])
            tensor = cst.Call(func=cst.Attribute(cst.Name("torch"), cst.Name("tensor")), args=[cst.Arg(value)])
            args[index] = arg.with_changes(value=tensor)
            return updated.with_changes(args=args)
        return updated



def apply(module: cst.Module, target: Target) -> cst.Module:
    if "import torch" not in module.code:
        return module
    return module.visit(TensorLr(_numeric_names(module)))
