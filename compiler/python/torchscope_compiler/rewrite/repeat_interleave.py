"""repeat-interleave-output-size:EXPR: repeat_interleave(...) gets output_size=EXPR, so it needs no host-device sync."""

from __future__ import annotations

import libcst as cst

from .common import Target, append_arg, keyword_arg

FIX_ID = "repeat-interleave-output-size"


class RepeatInterleaveOutputSize(cst.CSTTransformer):
    def __init__(self, output_size: str) -> None:
        super().__init__()
        self.output_size = cst.parse_expression(output_size)

    def leave_Call(self, original, updated):
        if not (isinstance(updated.func, cst.Attribute) and updated.func.attr.value == "repeat_interleave"):
            return updated
        if any(a.keyword is not None and a.keyword.value == "output_size" for a in updated.args):
            return updated
        return updated.with_changes(args=append_arg(list(updated.args), keyword_arg("output_size", self.output_size)))


def apply(module: cst.Module, target: Target) -> cst.Module:
    # Without the size expression nothing changes: only the user knows a size that the host holds.
    return module.visit(RepeatInterleaveOutputSize(target.arg)) if target.arg else module
