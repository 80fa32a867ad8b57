"""item-kept-as-tensor:FILE:LINE[;...]: `n = t.item()` (or `t.tolist()`) whose value only builds a tensor
(`torch.tensor(n)`) or indexes one (`w[n]`) keeps it a tensor: `n = t.detach().reshape(())`, `torch.tensor(n)`
-> `n` and `w[n]` -> `w[n.reshape(1)].squeeze(0)` (torch reads a 0-d index as a Python int, a one-element index
as a tensor), so Dynamo need not leave the graph for a Python number. A use as a Python number
(arithmetic with floats, `range(n)`, a print, a return) keeps it as it is, noted with the line that needs it.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import ParentNodeProvider, PositionProvider

from .common import ScopeVisitor, Target, torch_alias

FIX_ID = "item-kept-as-tensor"

TENSOR_BUILDERS = ("tensor", "as_tensor")


def _host_call(value: cst.BaseExpression) -> str | None:
    """"item" or "tolist" when the value is `expr.item()` / `expr.tolist()`."""
    if isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in ("item", "tolist"):
        return value.func.attr.value
    return None


class _Sites(ScopeVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.assigns: list[tuple[cst.Assign, cst.CSTNode]] = []  # each plain `name = value` with its function

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.assigns.append((node, self.scope))


def _uses(scope: cst.CSTNode, name: str) -> list[cst.Name]:
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node):
            if node.value == name:
                found.append(node)

    scope.visit(Names())
    return found


def _one_element_index(subscript: cst.Subscript, name: cst.Name) -> cst.Call:
    """`w[n]` -> `w[n.reshape(1)].squeeze(0)`: the same row, indexed by a tensor."""
    index = cst.Call(func=cst.Attribute(name, cst.Name("reshape")), args=[cst.Arg(cst.Integer("1"))])
    indexed = subscript.with_changes(slice=[cst.SubscriptElement(cst.Index(index))])
    return cst.Call(func=cst.Attribute(indexed, cst.Name("squeeze")), args=[cst.Arg(cst.Integer("0"))])


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original, updated):
        return self.replacements.get(id(original), updated)


def apply(module: cst.Module, target: Target) -> cst.Module:
    lines = target.lines()
    if not lines:
        return module
    torch_name = torch_alias(module)
    wrapper = cst.MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    sites = _Sites()
    wrapper.visit(sites)
    replacements: dict[int, cst.CSTNode] = {}
    for line in lines:
        why = _rewrite_at(line, sites, positions, parents, torch_name, wrapper.module, replacements)
        if why is not None:
            target.refuse(FIX_ID, line, why)
    return wrapper.module.visit(_Replace(replacements)) if replacements else module


def _rewrite_at(line, sites, positions, parents, torch_name, module, replacements) -> str | None:
    at_line = [(a, s) for a, s in sites.assigns if positions[a].start.line <= line <= positions[a].end.line]
    if not at_line:
        return "no `name = tensor.item()` or `name = tensor.tolist()` on that line"
    assign, scope = at_line[0]
    call = _host_call(assign.value)
    if call is None:
        code = module.code_for_node(assign.value)
        return f"`{code}` is not a plain `tensor.item()` or `tensor.tolist()`"
    name = assign.targets[0].target.value
    edits: dict[int, cst.CSTNode] = {}
    for use in _uses(scope, name):
        parent = parents[use]
        if parent is assign.targets[0]:
            continue
        use_line = positions[use].start.line
        if isinstance(parent, cst.AssignTarget) or use_line < line:
            return f"`{name}` is also assigned or read at line {use_line}, so it is not only this value"
        builder = parents.get(parent) if isinstance(parent, cst.Arg) else None
        if isinstance(builder, cst.Call) and len(builder.args) == 1 and builder.args[0] is parent \
                and (get_full_name_for_node(builder.func) or "").split(".")[-1] in TENSOR_BUILDERS:
            edits[id(builder)] = use
            continue
        element = parents.get(parent) if isinstance(parent, cst.Index) else None
        if isinstance(element, cst.SubscriptElement):
            subscript = parents[element]
            if call == "tolist":
                continue
            if len(subscript.slice) == 1:
                edits[id(subscript)] = _one_element_index(subscript, use)
                continue
            return (f"`{name}` is one of several indices at line {use_line}, where torch would read a 0-d tensor "
                    "as a Python int")
        return (f"`{name}` is used as a Python number at line {use_line} "
                f"(`{module.code_for_node(parents.get(parent, parent)).strip()}`), so it must stay one")
    if torch_name is None and edits:
        return "torch is not imported in this file"
    receiver = assign.value.func.value
    kept = cst.Call(func=cst.Attribute(receiver, cst.Name("detach")))
    if call == "item":  # item() takes the one element of any shape: the tensor keeps its 0-d shape
        kept = cst.Call(func=cst.Attribute(kept, cst.Name("reshape")), args=[cst.Arg(cst.Tuple([]))])
    replacements[id(assign.value)] = kept
    replacements.update(edits)
    return None
