"""remove-data-dependent-branch:FILE:LINE[;...]: the tensor-valued `if`/`elif` there becomes branchless.

Branches that call functions of one signature on the same arguments (`return self.a(h)` / `return self.b(h)`, or
`y = f(h, m)` / `y = g(h, m)`) -> `torch.cond(cond, self.a, self.b, (h,))`, which runs only the branch taken;
branches that only assign names -> `x = torch.where(cond, then, else_or_x)` per name. A branch it cannot rewrite
is noted with why."""

from __future__ import annotations

import functools

import libcst as cst
from libcst.metadata import PositionProvider

from .common import ScopeVisitor, Target, comma, torch_alias, unused_name

FIX_ID = "remove-data-dependent-branch"


class _BranchSites(ScopeVisitor):
    """Each `if`/`elif` with its chain's head line and enclosing function, for the lines asked about."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.sites: list[tuple[cst.If, cst.If | None, int, cst.CSTNode]] = []  # (if, parent if, head line, scope)
        self.heads: dict[int, tuple[cst.If | None, int]] = {}

    def visit_If(self, node):
        parent, head_line = self.heads.get(id(node), (None, self.get_metadata(PositionProvider, node).start.line))
        self.sites.append((node, parent, head_line, self.scope))
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
    return cst.Call(func=cst.Attribute(cst.Name(torch_name), cst.Name("where")),
                    args=[cst.Arg(cond, comma=comma()), cst.Arg(then, comma=comma()), cst.Arg(otherwise)])


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


def _only_statement(block: cst.BaseSuite) -> cst.BaseSmallStatement | None:
    lines = block.body if isinstance(block, cst.IndentedBlock) else [cst.SimpleStatementLine(block.body)]
    if len(lines) != 1 or not isinstance(lines[0], cst.SimpleStatementLine) or len(lines[0].body) != 1:
        return None
    return lines[0].body[0]


def _call_of(statement: cst.BaseSmallStatement | None) -> tuple[str, cst.Call] | None:
    """("return", call) or (name, call) for `return f(args)` / `name = f(args)` with plain positional args."""
    if isinstance(statement, cst.Return):
        kind, value = "return", statement.value
    elif isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0].target, cst.Name):
        kind, value = statement.targets[0].target.value, statement.value
    else:
        return None
    if not isinstance(value, cst.Call) or not value.args:
        return None
    if any(arg.keyword is not None or arg.star for arg in value.args):
        return None
    return kind, value


def _cond_form(branch: cst.If, torch_name: str) -> cst.SimpleStatementLine | None:
    """`torch.cond(test, f, g, (args,))` for an if/else whose branches call f and g on the same arguments."""
    if not isinstance(branch.orelse, cst.Else):
        return None
    then = _call_of(_only_statement(branch.body))
    otherwise = _call_of(_only_statement(branch.orelse.body))
    if then is None or otherwise is None or then[0] != otherwise[0]:
        return None
    then_args, else_args = then[1].args, otherwise[1].args
    if len(then_args) != len(else_args) or not all(a.value.deep_equals(b.value) for a, b in zip(then_args, else_args)):
        return None
    operands = [cst.Element(arg.value, comma=comma() if i < len(then_args) - 1 else cst.MaybeSentinel.DEFAULT)
                for i, arg in enumerate(then_args)]
    if len(operands) == 1:
        operands[0] = operands[0].with_changes(comma=cst.Comma())
    call = cst.Call(func=cst.Attribute(cst.Name(torch_name), cst.Name("cond")),
                    args=[cst.Arg(branch.test, comma=comma()), cst.Arg(then[1].func, comma=comma()),
                          cst.Arg(otherwise[1].func, comma=comma()), cst.Arg(cst.Tuple(operands))])
    statement = cst.Return(call) if then[0] == "return" else cst.Assign([cst.AssignTarget(cst.Name(then[0]))], call)
    line = cst.SimpleStatementLine([statement])
    # A comment after the `if ...:` stays on the line that replaces it.
    header = branch.body.header if isinstance(branch.body, cst.IndentedBlock) else None
    return line.with_changes(trailing_whitespace=header) if header is not None and header.comment else line


def _place(branch: cst.If, parent: cst.If | None, merged: list[cst.BaseStatement],
           statements: dict[int, list[cst.BaseStatement]], elses: dict[int, cst.Else]) -> None:
    """The head `if` is replaced by `merged`; an `elif` becomes its chain's `else` holding `merged`."""
    if parent is None:
        merged[0] = merged[0].with_changes(leading_lines=[*branch.leading_lines, *merged[0].leading_lines])
        statements[id(branch)] = merged
    else:
        body = branch.body if isinstance(branch.body, cst.IndentedBlock) else cst.IndentedBlock(body=[])
        elses[id(branch)] = cst.Else(body=body.with_changes(body=merged), leading_lines=branch.leading_lines,
                                     whitespace_before_colon=branch.whitespace_after_test)


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


def apply(module: cst.Module, target: Target) -> cst.Module:
    lines = target.lines()
    if not lines:
        return module
    torch_name = torch_alias(module)
    wrapper = cst.MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)
    sites = _BranchSites()
    wrapper.visit(sites)
    statements: dict[int, list[cst.BaseStatement]] = {}
    elses: dict[int, cst.Else] = {}
    for line in lines:
        refuse = functools.partial(target.refuse, FIX_ID, line)
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
        cond_form = _cond_form(branch, torch_name)
        if cond_form is not None:
            _place(branch, parent, [cond_form], statements, elses)
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
            condition = cst.Name(unused_name(wrapper.module, "branch_taken"))
            taken = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(condition)], branch.test)])]
        _place(branch, parent, [*taken, *_merged_lines(branch, torch_name, fallbacks, condition)], statements, elses)
    if not statements and not elses:
        return module
    return wrapper.module.visit(RemoveDataDependentBranch(statements, elses))
