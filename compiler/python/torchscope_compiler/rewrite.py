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
  remove-data-dependent-branch:FILE:LINE[;FILE:LINE...]
                                  the tensor-valued `if`/`elif` on that line, whose branches only
                                  assign names, -> `x = torch.where(cond, then, else_or_x)` per name;
                                  a branch it cannot merge is named on stderr with why, unchanged
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import os
import sys

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import PositionProvider

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


def _torch_alias(module: cst.Module) -> str | None:
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


def _branch_locations(arg: str, relative_path: str, absolute_path: str) -> list[int]:
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


class _BranchSites(cst.CSTVisitor):
    """Each `if`/`elif` with its chain's head line and enclosing function, for the lines asked about."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.functions: list[cst.FunctionDef | cst.Module] = []
        self.sites: list[tuple[cst.If, cst.If | None, int, cst.CSTNode]] = []  # (if, parent if, head line, scope)
        self.heads: dict[int, tuple[cst.If | None, int]] = {}

    def visit_Module(self, node):
        self.functions.append(node)

    def visit_FunctionDef(self, node):
        self.functions.append(node)

    def leave_FunctionDef(self, original):
        self.functions.pop()

    def visit_If(self, node):
        parent, head_line = self.heads.get(id(node), (None, self.get_metadata(PositionProvider, node).start.line))
        self.sites.append((node, parent, head_line, self.functions[-1]))
        if isinstance(node.orelse, cst.If):
            self.heads[id(node.orelse)] = (node, head_line)


def _assigned_before(scope: cst.CSTNode, line: int, positions) -> set[str]:
    """Names the scope binds (parameters, or any binding on an earlier line) before `line`."""
    names: set[str] = set()
    if isinstance(scope, cst.FunctionDef):
        params = scope.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            names.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.add(star.name.value)

    class Bindings(cst.CSTVisitor):
        def _bind(self, target):
            if isinstance(target, cst.Name) and positions[target].start.line < line:
                names.add(target.value)
            elif isinstance(target, (cst.Tuple, cst.List)):
                for element in target.elements:
                    self._bind(element.value)

        def visit_AssignTarget(self, node):
            self._bind(node.target)

        def visit_AnnAssign(self, node):
            if node.value is not None:
                self._bind(node.target)

        def visit_AugAssign(self, node):
            self._bind(node.target)

        def visit_For(self, node):
            self._bind(node.target)

        def visit_NamedExpr(self, node):
            self._bind(node.target)

        def visit_AsName(self, node):
            self._bind(node.name)

        def visit_FunctionDef(self, node):
            return False  # its names are its own

        visit_ClassDef = visit_Lambda = visit_FunctionDef

    (scope.body if isinstance(scope, cst.FunctionDef) else scope).visit(Bindings())
    return names


def _assignments(block: cst.BaseSuite, code_for_node) -> tuple[list[cst.Assign], str | None]:
    """The branch's `name = expr` statements in order, or why the branch does more than that."""
    lines = block.body if isinstance(block, cst.IndentedBlock) else [cst.SimpleStatementLine(block.body)]
    assigns = []
    for line in lines:
        smalls = line.body if isinstance(line, cst.SimpleStatementLine) else [line]
        for small in smalls:
            if isinstance(small, cst.Pass):
                continue
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)):
                statement = code_for_node(small).strip().splitlines()[0]
                return [], f"the branch does more than assign names: `{statement}`"
            assigns.append(small)
    if not assigns:
        return [], "the branch assigns nothing"
    return assigns, None


def _names(assigns: list[cst.Assign]) -> list[str]:
    return [a.targets[0].target.value for a in assigns]


def _where(torch_name: str, cond: cst.BaseExpression, then: cst.BaseExpression,
           otherwise: cst.BaseExpression) -> cst.Call:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return cst.Call(func=cst.Attribute(cst.Name(torch_name), cst.Name("where")),
                    args=[cst.Arg(cond, comma=comma), cst.Arg(then, comma=comma), cst.Arg(otherwise)])


def _unused_name(module: cst.Module, base: str) -> str:
    used: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node):
            used.add(node.value)

    module.visit(Names())
    return next(name for name in (base, *(f"{base}_{n}" for n in range(2, 1000))) if name not in used)


def _merged_lines(branch: cst.If, torch_name: str, otherwise: dict[int, cst.BaseExpression],
                  condition: cst.BaseExpression) -> list[cst.BaseStatement]:
    """The `if` branch's own lines (comments kept) with each `x = e` now `x = torch.where(condition, e, other)`."""
    index = 0
    merged = []
    body = branch.body
    lines = body.body if isinstance(body, cst.IndentedBlock) else [cst.SimpleStatementLine(body.body)]
    for line in lines:
        smalls = []
        for small in line.body:
            if isinstance(small, cst.Assign):
                fallback = otherwise.get(index, small.targets[0].target)
                smalls.append(small.with_changes(value=_where(torch_name, condition, small.value, fallback)))
                index += 1
        if smalls:
            smalls[-1] = smalls[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            merged.append(line.with_changes(body=smalls))
    return merged


class RemoveDataDependentBranch(cst.CSTTransformer):
    """The tensor-valued `if`/`elif` at the finding's lines, whose branches only assign names, -> torch.where."""

    def __init__(self, statements: dict[int, list[cst.BaseStatement]], elses: dict[int, cst.Else]) -> None:
        super().__init__()
        self.statements = statements  # id(if) -> the statements that replace it
        self.elses = elses  # id(elif) -> the else that replaces it in its chain

    def leave_If(self, original, updated):
        if isinstance(original.orelse, cst.If) and id(original.orelse) in self.elses:
            return updated.with_changes(orelse=self.elses[id(original.orelse)])
        if id(original) in self.statements:
            return cst.FlattenSentinel(self.statements[id(original)])
        return updated


def remove_data_dependent_branches(module: cst.Module, lines: list[int], torch_name: str | None,
                                   where: str, notes: list[str]) -> cst.Module:
    wrapper = cst.MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)
    sites = _BranchSites()
    wrapper.visit(sites)
    statements: dict[int, list[cst.BaseStatement]] = {}
    elses: dict[int, cst.Else] = {}
    for line in lines:
        refuse = functools.partial(_refuse, notes, where, line)
        at_line = [s for s in sites.sites
                   if positions[s[0].test].start.line <= line <= positions[s[0].test].end.line]
        if not at_line:
            refuse("no `if` or `elif` on that line")
            continue
        branch, parent, head_line, scope = at_line[-1]
        if torch_name is None:
            refuse("torch is not imported in this file, so torch.where cannot be called there")
            continue
        if isinstance(branch.orelse, cst.If):
            refuse("`elif` branches follow it, so no single value stands for the condition being false")
            continue
        then, why = _assignments(branch.body, wrapper.module.code_for_node)
        if why is None and branch.orelse is not None:
            otherwise, why = _assignments(branch.orelse.body, wrapper.module.code_for_node)
            if why is None and _names(otherwise) != _names(then):
                why = (f"the branches assign different names ({', '.join(_names(then))} against "
                       f"{', '.join(_names(otherwise))})")
            fallbacks = {i: a.value for i, a in enumerate(otherwise)}
        elif why is None:
            defined = _assigned_before(scope, head_line, positions)
            missing = [n for n in dict.fromkeys(_names(then)) if n not in defined]
            if missing:
                why = (f"`{missing[0]}` is not assigned before the `if`, so it has no value to keep when the "
                       "condition is false")
            fallbacks = {}
        if why is not None:
            refuse(why)
            continue
        # Several names: the condition is taken once, before the first of them changes what it reads.
        condition = branch.test
        taken = []
        if len(then) > 1:
            condition = cst.Name(_unused_name(wrapper.module, "branch_taken"))
            taken = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(condition)], branch.test)])]
        merged = [*taken, *_merged_lines(branch, torch_name, fallbacks, condition)]
        if parent is None:
            merged[0] = merged[0].with_changes(leading_lines=[*branch.leading_lines, *merged[0].leading_lines])
            statements[id(branch)] = merged
        else:
            body = branch.body if isinstance(branch.body, cst.IndentedBlock) else cst.IndentedBlock(body=[])
            elses[id(branch)] = cst.Else(body=body.with_changes(body=merged), leading_lines=branch.leading_lines,
                                         whitespace_before_colon=branch.whitespace_after_test)
    if not statements and not elses:
        return module
    return wrapper.module.visit(RemoveDataDependentBranch(statements, elses))


def _refuse(notes: list[str], where: str, line: int, why: str) -> None:
    notes.append(f"remove-data-dependent-branch: {where}:{line} left alone: {why}")


SOURCE_FIXES = ("dynamic-shapes", "tensor-lr", "repeat-interleave-output-size", "item-accumulate-tensor",
                "tuple-keys-to-str", "print-out-of-compiled", "remove-data-dependent-branch")


def rewrite_source(source: str, fixes: list[tuple[str, str]], relative_path: str = "", absolute_path: str = "",
                   notes: list[str] | None = None) -> str:
    """Applies the fixes, in order, to one file's text; raises cst.ParserSyntaxError on bad Python.

    The paths say which file this is (fixes aimed at a FILE:LINE); `notes` gets why a fix aimed at
    this file left it alone.
    """
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
        elif fix_id == "remove-data-dependent-branch":
            lines = _branch_locations(arg, relative_path, absolute_path)
            if lines:
                module = remove_data_dependent_branches(module, lines, _torch_alias(module), relative_path,
                                                        notes if notes is not None else [])
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
    if any(i == "remove-data-dependent-branch" and not a for i, a in fixes):
        print("rewrite: remove-data-dependent-branch needs the branch's FILE:LINE (the finding's location); "
              "nothing changed", file=sys.stderr)
    for path in args.files:
        notes: list[str] = []
        try:
            with open(path, encoding="utf-8") as handle:
                old = handle.read()
            new = rewrite_source(old, fixes, os.path.relpath(path, args.root), os.path.abspath(path), notes)
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError) as error:
            print(f"rewrite: {path} skipped: {str(error).splitlines()[0] if str(error) else error}", file=sys.stderr)
            continue
        for note in notes:
            print(f"rewrite: {note}", file=sys.stderr)
        if new == old:
            continue
        sys.stdout.write(unified_diff(old, new, os.path.relpath(path, args.root)))
        if args.in_place:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
