"""sdpa[:FILE:LINE;...]: hand-written attention becomes one `torch.nn.functional.scaled_dot_product_attention` call.

`softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1) @ v` (also `* scale`, `torch.matmul`/`torch.bmm`,
`k.mT`, `x.softmax(-1)`), with an additive mask (`scores + mask` -> `attn_mask=mask`) or a masked fill
(`scores.masked_fill(mask == 0, float("-inf"))` -> `attn_mask=mask != 0`: SDPA's boolean mask marks the scores that
take part), written as one expression or over statements (`scores = ...; weights = softmax(scores); out = weights @ v`)
whose intermediate names are read nowhere else: those statements go, the product becomes the call. A scale SDPA
applies anyway (1/sqrt of q's or k's last size) is left out; any other is passed as `scale=` (none: `scale=1.0`).
With lines (the finding's), the attention whose statements hold each line; without, every one in the file.
Left alone, with why: dropout on the weights (SDPA's dropout_p would draw other masks in training), weights read
elsewhere (SDPA does not return them), a softmax over another dim or with a dtype, a fill that is not -inf, scores
that are not q @ k-transposed, a name rebound between the statements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import ParentNodeProvider, PositionProvider

from .common import ScopeVisitor, Target, keyword_arg, torch_alias

FIX_ID = "sdpa"

FUNCTIONAL = "torch.nn.functional"
NEGATED = {cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal, cst.LessThan: cst.GreaterThanEqual,
           cst.GreaterThanEqual: cst.LessThan, cst.GreaterThan: cst.LessThanEqual, cst.LessThanEqual: cst.GreaterThan}


class _Refused(Exception):
    def __init__(self, why: str, attention_like: bool = True) -> None:
        super().__init__(why)
        self.why = why
        self.attention_like = attention_like  # the softmax does feed `@ v`: worth a note even when not asked for


@dataclass
class _Attention:
    lines: tuple[int, int]  # first and last line of the statements it covers
    product: cst.CSTNode | None = None  # the `weights @ v` that becomes the call
    call: cst.Call | None = None
    removed: list[cst.CSTNode] = field(default_factory=list)  # the intermediate statements
    why: str = ""
    attention_like: bool = True


def _functional_alias(module: cst.Module) -> str | None:
    """The name torch.nn.functional is imported as (`import torch.nn.functional as F`, `from torch.nn import
    functional as F`)."""
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if get_full_name_for_node(alias.name) == FUNCTIONAL and alias.asname is not None:
                        return alias.asname.name.value
            elif isinstance(small, cst.ImportFrom) and get_full_name_for_node(small.module) == "torch.nn" \
                    and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    if get_full_name_for_node(alias.name) == "functional":
                        return alias.asname.name.value if alias.asname else "functional"
    return None


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _is_minus_one(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
        and isinstance(node.expression, cst.Integer) and node.expression.value == "1"


def _is_minus_inf(node: cst.BaseExpression) -> bool:
    code = _code(node).replace(" ", "").replace("'", '"')
    return code in ('float("-inf")', '-float("inf")', "-math.inf", "-torch.inf", "-np.inf", "-numpy.inf",
                    "float(\"-Infinity\")")


def _call_args(call: cst.Call) -> tuple[list[cst.BaseExpression], dict[str, cst.BaseExpression]]:
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    return positional, keywords


class _Analysis:
    """Follows one softmax down to q @ k-transposed and up to `@ v`, through single-use names of its block."""

    def __init__(self, softmax: cst.Call, module_names: set[str], positions, parents, scope: cst.CSTNode) -> None:
        self.softmax = softmax
        self.module_names = module_names
        self.positions = positions
        self.parents = parents
        self.scope = scope
        self.statement = self._statement_of(softmax)
        self.block = parents[self.statement]
        self.body = list(self.block.body)
        self.index = self.body.index(self.statement)
        self.consumed: list[int] = []  # indices of the block's statements the call replaces
        self.followed: set[int] = set()  # ids of the Name reads the chain went through
        self.span = [self._line(self.statement), self._end(self.statement)]

    def _line(self, node) -> int:
        return self.positions[node].start.line

    def _end(self, node) -> int:
        return self.positions[node].end.line

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        while not isinstance(node, cst.SimpleStatementLine):
            node = self.parents[node]
        return node

    def _cover(self, statement) -> None:
        self.span = [min(self.span[0], self._line(statement)), max(self.span[1], self._end(statement))]

    # -- the block's names --------------------------------------------------------------------------------------
    def _binds(self, statement, name: str) -> bool:
        bound = False

        class Targets(cst.CSTVisitor):
            def visit_AssignTarget(self, node):
                nonlocal bound
                bound = bound or any(n.value == name for n in _names(node.target))

            def visit_AugAssign(self, node):
                nonlocal bound
                bound = bound or any(n.value == name for n in _names(node.target))

            def visit_For(self, node):
                nonlocal bound
                bound = bound or any(n.value == name for n in _names(node.target))

        statement.visit(Targets())
        return bound

    def _resolve(self, expr: cst.BaseExpression, before: int) -> tuple[cst.BaseExpression, int]:
        """A name assigned by a plain `name = value` earlier in the block: that value (and its statement's index)."""
        if not isinstance(expr, cst.Name):
            return expr, before
        for index in range(before - 1, -1, -1):
            statement = self.body[index]
            if not self._binds(statement, expr.value):
                continue
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
            if isinstance(small, cst.Assign) and len(statement.body) == 1 and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name):
                self.consumed.append(index)
                self.followed.add(id(expr))
                self._cover(statement)
                return small.value, index
            return expr, before
        return expr, before

    # -- down: scores = q @ k.transpose(-2, -1) [* scale] [+ mask | .masked_fill(cond, -inf)] -----------------
    def _matmul_operands(self, node) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
            return node.left, node.right
        if isinstance(node, cst.Call) and (get_full_name_for_node(node.func) or "").split(".")[-1] in ("matmul", "bmm"):
            positional, keywords = _call_args(node)
            if len(positional) == 2 and not keywords:
                return positional[0], positional[1]
        return None

    def _untransposed(self, node) -> cst.BaseExpression | None:
        if isinstance(node, cst.Attribute) and node.attr.value == "mT":
            return node.value
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "transpose":
            positional, keywords = _call_args(node)
            receiver = node.func.value
            if get_full_name_for_node(receiver) in self.module_names and positional:  # torch.transpose(k, -2, -1)
                receiver, positional = positional[0], positional[1:]
            dims = {_code(d).replace(" ", "") for d in positional}
            if len(positional) == 2 and not keywords and dims in ({"-2", "-1"}, {"2", "3"}):
                return receiver
        return None

    def _scores(self, expr, before) -> tuple[cst.BaseExpression, cst.BaseExpression, cst.BaseExpression | None]:
        """q, k and the scale's expression (None: no scale) of `q @ k.T [* or / scale]`."""
        node, at = self._resolve(expr, before)
        scale = None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
            scale = ("divide", node.right)
            node, at = self._resolve(node.left, at)
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
            left, left_at = node.left, at
            if self._matmul_operands(self._peek(left, at)) is not None:
                scale = ("multiply", node.right)
                node, at = self._resolve(left, left_at)
            else:
                scale = ("multiply", node.left)
                node, at = self._resolve(node.right, at)
        operands = self._matmul_operands(node)
        if operands is None:
            raise _Refused(f"the softmax's input `{_code(expr).strip()}` is not q @ k.transpose(-2, -1), scaled")
        query, key_transposed = operands
        key_transposed, _ = self._resolve(key_transposed, at)
        key = self._untransposed(key_transposed)
        if key is None:
            raise _Refused(f"`{_code(key_transposed).strip()}` is not the keys transposed over their last two dims")
        return query, key, self._scale_argument(scale, query, key)

    def _peek(self, expr, before):
        """What _resolve would give, without taking the statement."""
        consumed, followed, span = list(self.consumed), set(self.followed), list(self.span)
        node, _ = self._resolve(expr, before)
        self.consumed, self.followed, self.span = consumed, followed, span
        return node

    def _scale_argument(self, scale, query, key) -> cst.BaseExpression | None:
        """None where SDPA's own scale, 1 / sqrt(q.size(-1)), is the one written; else the scale= value."""
        if scale is None:
            return cst.Float("1.0")
        how, value = scale
        sizes = {f"{_code(t).strip()}.{s}" for t in (query, key) for s in ("size(-1)", "shape[-1]")}
        text = _code(value).replace(" ", "")
        roots = {f"math.sqrt({s})" for s in sizes} | {f"{s}**0.5" for s in sizes} | {f"({s})**0.5" for s in sizes}
        if how == "divide" and text in roots:
            return None
        if how == "multiply" and (text in {f"{s}**-0.5" for s in sizes} | {f"1/{r}" for r in roots}
                                  | {f"1.0/{r}" for r in roots} | {f"(1/{r})" for r in roots}):
            return None
        if how == "multiply":
            return value.with_changes(lpar=[], rpar=[]) if isinstance(value, cst.BinaryOperation) else value
        if isinstance(value, cst.BinaryOperation) and not isinstance(value.operator, cst.Power):
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.BinaryOperation(left=cst.Integer("1"), operator=cst.Divide(
            whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")), right=value)

    def _masked(self, expr, before):
        """The scores, the attn_mask (or None) and the index to resolve the scores from."""
        node, at = self._resolve(expr, before)
        func = node.func if isinstance(node, cst.Call) else None
        if isinstance(func, cst.Attribute) and func.attr.value == "masked_fill":
            positional, keywords = _call_args(node)
            scores = node.func.value
            if get_full_name_for_node(scores) in self.module_names and positional:  # torch.masked_fill(s, c, v)
                scores, positional = positional[0], positional[1:]
            if len(positional) != 2 or keywords:
                raise _Refused(f"`{_code(node).strip()}` is not masked_fill(mask, value)")
            condition, value = positional
            if not _is_minus_inf(value):
                raise _Refused(f"the scores are filled with `{_code(value).strip()}`, not -inf: a boolean attn_mask "
                               "would drop them outright")
            return scores, _negated(condition), at
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            if self._matmul_like(node.left, at):
                return node.left, node.right, at
            if self._matmul_like(node.right, at):
                return node.right, node.left, at
        return node, None, at

    def _matmul_like(self, expr, before) -> bool:
        node = self._peek(expr, before)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)):
            return any(self._matmul_operands(self._peek(side, before)) is not None for side in (node.left, node.right))
        return self._matmul_operands(node) is not None

    # -- up: softmax(...) @ v, maybe through `weights = softmax(...)` ------------------------------------------
    def _softmax_input(self) -> cst.BaseExpression:
        positional, keywords = _call_args(self.softmax)
        function_form = isinstance(self.softmax.func, cst.Name) or \
            get_full_name_for_node(self.softmax.func.value) in self.module_names
        if not function_form:
            positional = [self.softmax.func.value, *positional]
        if not positional:
            raise _Refused("softmax without its input")
        dim = keywords.pop("dim", positional[1] if len(positional) > 1 else None)
        if dim is None:
            raise _Refused("softmax without dim")
        if not _is_minus_one(dim):
            raise _Refused(f"softmax over dim={_code(dim).strip()}, not the last (-1): SDPA normalises over the keys")
        if keywords:
            raise _Refused(f"softmax with {', '.join(keywords)}=...: SDPA computes in its inputs' dtype")
        return positional[0]

    def _product(self) -> tuple[cst.CSTNode, cst.BaseExpression, int]:
        """The `weights @ v` node, v, and the index of its statement."""
        node, parent = self.softmax, self.parents[self.softmax]
        if isinstance(parent, cst.Arg):
            node, parent = parent, self.parents[parent]
        operands = self._matmul_operands(parent)
        if operands is not None and (operands[0] is self.softmax):
            return parent, operands[1], self.index
        if isinstance(parent, cst.Call) and "drop" in (get_full_name_for_node(parent.func) or "").lower():
            raise _Refused(f"the attention weights go through `{_code(parent.func).strip()}` at line "
                           f"{self._line(parent)}: SDPA's dropout_p would draw other masks in training")
        small = self.statement.body[0]
        if not (isinstance(small, cst.Assign) and small.value is self.softmax and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)):
            raise _Refused("the softmax's result is not multiplied by the values (`softmax(...) @ v`)",
                           attention_like=False)
        weights = small.targets[0].target.value
        for index in range(self.index + 1, len(self.body)):
            statement = self.body[index]
            reads = [n for n in _names(statement) if n.value == weights and not _is_target(n, self.parents)]
            if not reads:
                if self._binds(statement, weights):
                    break
                continue
            read = reads[0]
            parent = self.parents[read]
            parent = self.parents[parent] if isinstance(parent, cst.Arg) else parent
            operands = self._matmul_operands(parent)
            if operands is not None and operands[0] is read:
                self.followed.add(id(read))
                self.consumed.append(self.index)
                return parent, operands[1], index
            if isinstance(parent, cst.Call) and "drop" in (get_full_name_for_node(parent.func) or "").lower():
                raise _Refused(f"the attention weights `{weights}` go through `{_code(parent.func).strip()}` at line "
                               f"{self._line(read)}: SDPA's dropout_p would draw other masks in training")
            break
        raise _Refused(f"the attention weights `{weights}` are not multiplied by the values (`{weights} @ v`) next",
                       attention_like=False)

    def run(self, function_name: str) -> _Attention:
        product, values, product_index = self._product()
        source = self._softmax_input()
        product_statement = self.body[product_index]
        self._cover(product_statement)
        scores, mask, at = self._masked(source, self.index)
        query, key, scale = self._scores(scores, at)
        self._check_names(product_index)
        arguments = [cst.Arg(query), cst.Arg(key), cst.Arg(values)]
        if mask is not None:
            arguments.append(keyword_arg("attn_mask", mask))
        if scale is not None:
            arguments.append(keyword_arg("scale", scale))
        spaced = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in arguments[:-1]]
        call = cst.Call(func=cst.parse_expression(function_name), args=[*spaced, arguments[-1]],
                        lpar=product.lpar, rpar=product.rpar)
        return _Attention(tuple(self.span), product, call, [self.body[i] for i in self.consumed])

    def _check_names(self, product_index: int) -> None:
        """Each intermediate name is read only by the chain, and nothing the moved values read is rebound before
        the product."""
        consumed = set(self.consumed)
        for index in consumed:
            statement = self.body[index]
            name = statement.body[0].targets[0].target
            for use in _names(self.scope):
                if use.value != name.value or use is name or id(use) in self.followed:
                    continue
                if _is_target(use, self.parents) and self._statement_of(use) in [self.body[i] for i in consumed]:
                    continue
                what = "the attention weights" if index == self.index else "the scores"
                raise _Refused(f"{what} `{name.value}` (line {self._line(statement)}) are also used at line "
                               f"{self._line(use)}" + (": SDPA does not return them" if index == self.index else ""))
            read = {n.value for n in _names(statement.body[0].value)}
            for later in range(index + 1, product_index):
                if later in consumed:
                    continue
                rebound = sorted(n for n in read if self._binds(self.body[later], n))
                if rebound:
                    raise _Refused(f"`{rebound[0]}` is assigned again at line {self._line(self.body[later])}, "
                                   "between the attention's statements")


def _names(node: cst.CSTNode) -> list[cst.Name]:
    """The Name nodes that are variables (not attributes or keyword names) under node."""
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name):
            found.append(name)

        def visit_Attribute(self, attribute):
            attribute.value.visit(self)
            return False

        def visit_Arg(self, arg):
            arg.value.visit(self)
            return False

    node.visit(Names())
    return found


def _is_target(name: cst.Name, parents) -> bool:
    return isinstance(parents.get(name), cst.AssignTarget)


def _negated(condition: cst.BaseExpression) -> cst.BaseExpression:
    """The positions that take part, from the condition masked_fill fills."""
    if isinstance(condition, cst.Comparison) and len(condition.comparisons) == 1:
        target = condition.comparisons[0]
        negation = NEGATED.get(type(target.operator))
        if negation is not None:
            operator = negation(whitespace_before=target.operator.whitespace_before,
                                whitespace_after=target.operator.whitespace_after)
            return condition.with_changes(comparisons=[target.with_changes(operator=operator)], lpar=[], rpar=[])
    if isinstance(condition, cst.UnaryOperation) and isinstance(condition.operator, cst.BitInvert):
        return condition.expression
    if not isinstance(condition, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        condition = condition.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.BitInvert(), expression=condition)


class _Softmaxes(ScopeVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[cst.Call, cst.CSTNode]] = []

    def visit_Call(self, node):
        if (get_full_name_for_node(node.func) or "").split(".")[-1] == "softmax":
            self.calls.append((node, self.scope))


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.CSTNode], removed: set[int]) -> None:
        super().__init__()
        self.replacements = replacements
        self.removed = removed

    def on_leave(self, original, updated):
        if id(original) in self.removed:
            return cst.RemoveFromParent()
        return self.replacements.get(id(original), updated)


def apply(module: cst.Module, target: Target) -> cst.Module:
    lines = target.lines()
    if target.arg and not lines:
        return module  # the findings name other files
    torch_name = torch_alias(module)
    functional = _functional_alias(module)
    function_name = f"{functional}.scaled_dot_product_attention" if functional else \
        f"{torch_name}.nn.functional.scaled_dot_product_attention" if torch_name else None
    module_names = {n for n in (torch_name, functional, "torch", "F", FUNCTIONAL, "nn.functional") if n}
    wrapper = cst.MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    softmaxes = _Softmaxes()
    wrapper.visit(softmaxes)
    found: list[_Attention] = []
    for call, scope in softmaxes.calls:
        analysis = _Analysis(call, module_names, positions, parents, scope)
        try:
            if function_name is None:
                raise _Refused("torch is not imported in this file")
            found.append(analysis.run(function_name))
        except _Refused as refused:
            found.append(_Attention(tuple(analysis.span), why=refused.why, attention_like=refused.attention_like))
    chosen: list[_Attention] = []
    for line in lines:
        at_line = [a for a in found if a.lines[0] <= line <= a.lines[1]]
        rewritable = [a for a in at_line if a.call is not None]
        if rewritable:
            chosen.extend(a for a in rewritable[:1] if a not in chosen)
        elif at_line:
            target.refuse(FIX_ID, line, at_line[0].why)
        else:
            target.refuse(FIX_ID, line, "no softmax(q @ k.transpose(-2, -1)) @ v on that line")
    if not lines:
        chosen = [a for a in found if a.call is not None]
        for attention in found:
            if attention.call is None and attention.attention_like:
                target.refuse(FIX_ID, attention.lines[0], attention.why)
    if not chosen:
        return module
    replacements = {id(a.product): a.call for a in chosen}
    removed = {id(statement) for a in chosen for statement in a.removed}
    return wrapper.module.visit(_Replace(replacements, removed))
