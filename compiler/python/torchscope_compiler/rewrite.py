"""Source fixes: formatting-preserving rewrites of the user's Python files with LibCST.

    python -m torchscope_compiler.rewrite --fix ID[:ARG][,ID...] [--root DIR] [--in-place] FILE...
    python -m torchscope_compiler.rewrite --list

Prints a unified diff (paths relative to --root, default the current directory, with a/ and b/
prefixes) of what the fixes change; --in-place also writes the changed files. A file that does
not parse is left alone and named on stderr. Exit code 0, or 2 for bad arguments.

Fix ids (shared with the analyzer's fix.id):
  dynamic-shapes                  torch.compile(...) gets dynamic=True
  tensor-lr                       torch.optim.X(params, lr=0.01) -> lr=torch.tensor(0.01) (number
                                  literals, UPPER_CASE constants and names only assigned numbers)
  repeat-interleave-output-size:EXPR
                                  repeat_interleave(...) gets output_size=EXPR (EXPR must be
                                  known on the host, e.g. a batch size; without it nothing changes)
  item-accumulate-tensor          `total += loss.item()` in a loop accumulates a tensor instead;
                                  one `.item()` after the loop
  tuple-keys-to-str               ModuleDict/ParameterDict tuple keys ("a", "b") -> "a__b",
                                  and the subscripts that use them
  print-out-of-compiled           print(...) statements removed from functions that torch.compile
                                  compiles (decorated, or passed to torch.compile in the module)
"""

from __future__ import annotations

import argparse
import ast
import difflib
import os
import sys

import libcst as cst
from libcst.helpers import get_full_name_for_node

OPTIMIZERS = {
    "SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Rprop", "NAdam", "RAdam",
    "ASGD", "SparseAdam", "LBFGS", "Adafactor",
}


def _is_torch_compile(node: cst.CSTNode) -> bool:
    return get_full_name_for_node(node) in ("torch.compile", "compile")


class DynamicShapes(cst.CSTTransformer):
    def leave_Call(self, original, updated):
        if get_full_name_for_node(updated.func) != "torch.compile":
            return updated
        args = list(updated.args)
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "dynamic":
                args[index] = arg.with_changes(value=cst.Name("True"))
                return updated.with_changes(args=args)
        if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(keyword=cst.Name("dynamic"), value=cst.Name("True"),
                            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                  whitespace_after=cst.SimpleWhitespace(""))))
        return updated.with_changes(args=args)

    def leave_Decorator(self, original, updated):
        if get_full_name_for_node(updated.decorator) == "torch.compile" and not isinstance(updated.decorator, cst.Call):
            call = cst.Call(func=updated.decorator, args=[cst.Arg(
                keyword=cst.Name("dynamic"), value=cst.Name("True"),
                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                      whitespace_after=cst.SimpleWhitespace("")))])
            return updated.with_changes(decorator=call)
        return updated


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


class RepeatInterleaveOutputSize(cst.CSTTransformer):
    def __init__(self, output_size: str) -> None:
        super().__init__()
        self.output_size = cst.parse_expression(output_size)

    def leave_Call(self, original, updated):
        if not (isinstance(updated.func, cst.Attribute) and updated.func.attr.value == "repeat_interleave"):
            return updated
        if any(a.keyword is not None and a.keyword.value == "output_size" for a in updated.args):
            return updated
        args = list(updated.args)
        if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(keyword=cst.Name("output_size"), value=self.output_size,
                            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                  whitespace_after=cst.SimpleWhitespace(""))))
        return updated.with_changes(args=args)


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


class PrintOutOfCompiled(cst.CSTTransformer):
    def __init__(self, compiled_names: set[str]) -> None:
        super().__init__()
        self.compiled_names = compiled_names
        self.depth = 0

    def _compiled(self, node: cst.FunctionDef) -> bool:
        if node.name.value in self.compiled_names:
            return True
        return any(_is_torch_compile(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
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


def _compiled_function_names(module: cst.Module) -> set[str]:
    """Names passed as the first argument of torch.compile(...) anywhere in the module."""
    names: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node):
            if get_full_name_for_node(node.func) == "torch.compile" and node.args \
                    and isinstance(node.args[0].value, cst.Name):
                names.add(node.args[0].value.value)

    module.visit(Finder())
    return names


SOURCE_FIXES = ("dynamic-shapes", "tensor-lr", "repeat-interleave-output-size", "item-accumulate-tensor",
                "tuple-keys-to-str", "print-out-of-compiled")


def rewrite_source(source: str, fixes: list[tuple[str, str]]) -> str:
    """Applies the fixes, in order, to one file's text; raises cst.ParserSyntaxError on bad Python."""
    module = cst.parse_module(source)
    for fix_id, arg in fixes:
        if fix_id == "dynamic-shapes":
            module = module.visit(DynamicShapes())
        elif fix_id == "tensor-lr":
            if "import torch" in module.code:
                module = module.visit(TensorLr(_numeric_names(module)))
        elif fix_id == "repeat-interleave-output-size":
            if arg:
                module = module.visit(RepeatInterleaveOutputSize(arg))
        elif fix_id == "item-accumulate-tensor":
            module = module.visit(ItemAccumulateTensor())
        elif fix_id == "tuple-keys-to-str":
            keys = TupleKeysToStr()
            module = module.visit(keys)
            if keys.keys:
                module = module.visit(TupleSubscriptsToStr(keys.keys))
        elif fix_id == "print-out-of-compiled":
            module = module.visit(PrintOutOfCompiled(_compiled_function_names(module)))
    return module.code


def unified_diff(old: str, new: str, relative_path: str) -> str:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{relative_path}", tofile=f"b/{relative_path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchscope_compiler.rewrite")
    parser.add_argument("--fix", default="", help="comma-separated fix ids, each ID or ID:ARG")
    parser.add_argument("--root", default=".", help="diff paths are relative to this folder")
    parser.add_argument("--in-place", action="store_true", help="write the changed files")
    parser.add_argument("--list", action="store_true", help="print the source fix ids")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(SOURCE_FIXES))
        return 0
    from torchscope_compiler.runtime import parse

    fixes = [(i, a) for i, a in parse(args.fix) if i in SOURCE_FIXES]
    unknown = [i for i, _ in parse(args.fix) if i not in SOURCE_FIXES]
    if unknown and not fixes:
        print(f"rewrite: no source form for fix '{unknown[0]}'", file=sys.stderr)
        return 2
    for path in args.files:
        try:
            with open(path, encoding="utf-8") as handle:
                old = handle.read()
            new = rewrite_source(old, fixes)
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError) as error:
            print(f"rewrite: {path} skipped: {str(error).splitlines()[0] if str(error) else error}", file=sys.stderr)
            continue
        if new == old:
            continue
        sys.stdout.write(unified_diff(old, new, os.path.relpath(path, args.root)))
        if args.in_place:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
