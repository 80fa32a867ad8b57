"""The requests of an inference job as the launcher sees them, for `torchscope fix` (docs/compiler.md, *Inference
jobs*): each call of the outermost module with parameters is timed, with its batch size, and the outputs of the
first KEPT_OUTPUTS calls are kept, leaf by leaf, for the parity of outputs.

The wrapper is nn.Module.__call__ (as the torch-compile fix's), so it sits outside compiled code: a module compiled
by module.compile() or by the fix is timed as a whole, where a forward hook would run inside the compiled graph.
Dynamo is told to skip the wrapper's frame (runtime.DynamoSkip), so that torch.compile(module) still compiles the
module's forward.
Every variant of a fix experiment pays its cost alike.
"""

from __future__ import annotations

import dataclasses
import math
import time

from torchscope_compiler.runtime import DynamoSkip

KEPT_OUTPUTS = 8
MAX_VALUES = 4096  # per leaf: the figures compared; the leaf's sum and largest magnitude cover the rest
MAX_REQUESTS = 100_000


class NotComparable(Exception):
    """An output that is no tensor, number, None, or container of them."""


def _finite_or_none(value: float):
    return value if math.isfinite(value) else None


def _tensor_leaf(torch, tensor, path: str) -> dict:
    values = tensor.detach()
    if values.is_quantized:
        values = values.dequantize()
    if values.is_complex():
        values = torch.view_as_real(values)
    values = values.to("cpu", torch.float64)
    flat = values.flatten()
    leaf = {"path": path, "shape": list(tensor.shape), "dtype": str(tensor.dtype).replace("torch.", ""),
            "values": [_finite_or_none(v) for v in flat[:MAX_VALUES].tolist()],
            "abs_max": _finite_or_none(float(flat.abs().max())) if flat.numel() else 0.0}
    # Class scores: a batch of rows of two or more floating-point scores.
    if tensor.dim() == 2 and tensor.shape[1] >= 2 and tensor.is_floating_point():
        leaf["top1"] = values.argmax(dim=1)[:MAX_VALUES].tolist()
    return leaf


def encode(torch, value, path: str = "output") -> list:
    """The output's leaves, depth first: tensors, numbers; tuples, lists, dicts and dataclasses are walked."""
    leaves = []

    def walk(item, where):
        if isinstance(item, torch.Tensor):
            leaves.append(_tensor_leaf(torch, item, where))
        elif isinstance(item, bool) or isinstance(item, (int, float)):
            leaves.append({"path": where, "shape": [], "dtype": type(item).__name__,
                           "values": [_finite_or_none(float(item))], "abs_max": abs(float(item))})
        elif item is None:
            pass
        elif isinstance(item, dict):
            for key in item:
                walk(item[key], f"{where}[{key!r}]")
        elif isinstance(item, (tuple, list)):
            for index, element in enumerate(item):
                walk(element, f"{where}[{index}]")
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            for field in dataclasses.fields(item):
                walk(getattr(item, field.name), f"{where}.{field.name}")
        else:
            raise NotComparable(f"{where} is a {type(item).__module__}.{type(item).__qualname__}")

    walk(value, path)
    return leaves


class RequestRecorder:
    def __init__(self, start: float) -> None:
        self.start = start
        self.spans: list[list] = []  # [start_s, end_s, items] from the launcher's start
        self.outputs: list[dict] = []

    def install(self, torch, traced) -> None:
        original = torch.nn.Module.__call__
        recorder = self
        state = {"depth": 0}

        def __call__(module, *args, **kwargs):  # noqa: N807 - replaces nn.Module.__call__
            if traced():
                return original(module, *args, **kwargs)
            if not skip.done:
                skip()
            if state["depth"] or not recorder._has_parameters(module):
                return original(module, *args, **kwargs)
            state["depth"] = 1
            if module.__dict__.get("_torchscope_trial"):  # a fix trying its change on a copy of the model
                try:
                    return original(module, *args, **kwargs)
                finally:
                    state["depth"] = 0
            begin = time.perf_counter()
            try:
                output = original(module, *args, **kwargs)
            finally:
                state["depth"] = 0
            end = time.perf_counter()
            recorder._record(torch, begin, end, args, kwargs, output)
            return output

        __call__.__wrapped__ = original
        skip = DynamoSkip(__call__)
        torch.nn.Module.__call__ = __call__

    @staticmethod
    def _has_parameters(module) -> bool:
        known = module.__dict__.get("_torchscope_has_parameters")
        if known is None:
            known = next(module.parameters(), None) is not None
            object.__setattr__(module, "_torchscope_has_parameters", known)
        return known

    def _record(self, torch, begin, end, args, kwargs, output) -> None:
        if len(self.spans) >= MAX_REQUESTS:
            return
        items = -1
        for value in (*args, *kwargs.values()):
            if isinstance(value, torch.Tensor):
                items = int(value.shape[0]) if value.dim() > 0 else 1
                break
        self.spans.append([begin - self.start, end - self.start, items])
        if len(self.outputs) < KEPT_OUTPUTS:
            try:
                self.outputs.append({"leaves": encode(torch, output)})
            except NotComparable as reason:
                self.outputs.append({"not_comparable": str(reason)})
            except Exception as error:  # the job's output is its own business: never fail it here
                self.outputs.append({"not_comparable": f"{type(error).__name__}: {error}"})

    def report(self) -> dict:
        return {"requests": self.spans, "outputs": self.outputs}
