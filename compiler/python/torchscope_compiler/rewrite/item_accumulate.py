"""item-accumulate-tensor: `total += loss.item()` in a loop accumulates a tensor; one `.item()` after the loop."""

from __future__ import annotations

import libcst as cst

from .common import Target

FIX_ID = "item-accumulate-tensor"


class _DropItem(cst.CSTTransformer):
    """x.item() -> x.detach() (x.detach().item() -> x.detach())."""

    def leave_Call(self, original, updated):
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "item" and not updated.args:
            receiver = func.value
            already = isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                and receiver.func.attr.value == "detach"
            return receiver if already else cst.Call(func=cst.Attribute(receiver, cst.Name("detach")))
        return updated


def _has_item_call(node: cst.CSTNode) -> bool:
    class Finder(cst.CSTVisitor):
        found = False

        def visit_Call(self, call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "item" and not call.args:
                Finder.found = True

    node.visit(Finder())
    return Finder.found


class ItemAccumulateTensor(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self.loops: list[list[str]] = []

    def _enter_loop(self, _node) -> None:
        self.loops.append([])

    def _leave_loop(self, original, updated):
        names = self.loops.pop()
        if not names:
            return updated
        conversions = [cst.parse_statement(f'{n} = {n}.item() if hasattr({n}, "item") else {n}\n') for n in names]
        return cst.FlattenSentinel([updated, *conversions])

    visit_For = visit_While = _enter_loop
    leave_For = leave_While = _leave_loop

    def _accumulate(self, target, value):
        if not self.loops or not isinstance(target, cst.Name) or not _has_item_call(value):
            return None
        if target.value not in self.loops[-1]:
            self.loops[-1].append(target.value)
        return value.visit(_DropItem())

    def leave_AugAssign(self, original, updated):
        if not isinstance(updated.operator, (cst.AddAssign, cst.SubtractAssign)):
            return updated
        value = self._accumulate(updated.target, updated.value)
        return updated if value is None else updated.with_changes(value=value)

    def leave_Assign(self, original, updated):
        # total = total + loss.item()
        if len(updated.targets) != 1 or not isinstance(updated.value, cst.BinaryOperation):
            return updated
        target, value = updated.targets[0].target, updated.value
        if not (isinstance(value.operator, cst.Add) and isinstance(value.left, cst.Name)
                and isinstance(target, cst.Name) and value.left.value == target.value):
            return updated
        right = self._accumulate(target, value.right)
        return updated if right is None else updated.with_changes(value=value.with_changes(right=right))



def apply(module: cst.Module, target: Target) -> cst.Module:
    return module.visit(ItemAccumulateTensor())
