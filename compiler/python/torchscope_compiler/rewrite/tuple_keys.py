"""tuple-keys-to-str: ModuleDict/ParameterDict tuple keys ("a", "b") -> "a__b", and the subscripts that use them."""

from __future__ import annotations

import ast

import libcst as cst
from libcst.helpers import get_full_name_for_node

from .common import Target

FIX_ID = "tuple-keys-to-str"


def _string_tuple(node: cst.CSTNode):
    elements = node.elements if isinstance(node, cst.Tuple) else None
    if not elements or len(elements) < 2:
        return None
    values = []
    for element in elements:
        if not isinstance(element.value, cst.SimpleString):
            return None
        values.append(element.value)
    return values


def _literal_values(strings: list[cst.SimpleString]) -> tuple[str, ...]:
    return tuple(ast.literal_eval(s.value) for s in strings)


def _joined(strings: list[cst.SimpleString]) -> cst.SimpleString:
    text = "__".join(_literal_values(strings))
    return cst.SimpleString(repr(text) if strings[0].value.startswith("'") else '"' + text.replace('"', '\\"') + '"')


class TupleKeysToStr(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self.keys: set[tuple[str, ...]] = set()
        self.module_dict_depth = 0

    def visit_Call(self, node):
        name = get_full_name_for_node(node.func) or ""
        if name.endswith("ModuleDict") or name.endswith("ParameterDict"):
            self.module_dict_depth += 1

    def leave_Call(self, original, updated):
        name = get_full_name_for_node(original.func) or ""
        if name.endswith("ModuleDict") or name.endswith("ParameterDict"):
            self.module_dict_depth -= 1
        return updated

    def leave_DictElement(self, original, updated):
        strings = _string_tuple(updated.key) if self.module_dict_depth else None
        if strings is None:
            return updated
        self.keys.add(_literal_values(strings))
        return updated.with_changes(key=_joined(strings))


class TupleSubscriptsToStr(cst.CSTTransformer):
    def __init__(self, keys: set[tuple[str, ...]]) -> None:
        super().__init__()
        self.keys = keys

    def leave_Subscript(self, original, updated):
        elements = updated.slice
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            strings = _string_tuple(elements[0].slice.value)
        elif len(elements) >= 2 and all(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString)
                                        for e in elements):
            strings = [e.slice.value for e in elements]
        else:
            strings = None
        if strings is None or _literal_values(strings) not in self.keys:
            return updated
        return updated.with_changes(slice=[cst.SubscriptElement(cst.Index(_joined(strings)))])



def apply(module: cst.Module, target: Target) -> cst.Module:
    keys = TupleKeysToStr()
    module = module.visit(keys)
    return module.visit(TupleSubscriptsToStr(keys.keys)) if keys.keys else module
