"""dynamic-shapes: torch.compile(...) gets dynamic=True."""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from .common import Target, append_arg, keyword_arg

FIX_ID = "dynamic-shapes"


class DynamicShapes(cst.CSTTransformer):
    def leave_Call(self, original, updated):
        if get_full_name_for_node(updated.func) != "torch.compile":
            return updated
        args = list(updated.args)
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "dynamic":
                args[index] = arg.with_changes(value=cst.Name("True"))
                return updated.with_changes(args=args)
        return updated.with_changes(args=append_arg(args, keyword_arg("dynamic", cst.Name("True"))))

    def leave_Decorator(self, original, updated):
        if get_full_name_for_node(updated.decorator) == "torch.compile" and not isinstance(updated.decorator, cst.Call):
            call = cst.Call(func=updated.decorator, args=[keyword_arg("dynamic", cst.Name("True"))])
            return updated.with_changes(decorator=call)
        return updated


def apply(module: cst.Module, target: Target) -> cst.Module:
    return module.visit(DynamicShapes())
