"""The op census: what one steady-state step of an eager job costs op by op, on the host.

Python samples cannot tell an op's dispatch overhead from its kernel (a native call's time lands on its calling
line), so for a job that has compiled nothing the bridge counts the aten ops of ONE step: from the end of the
capture window's `PROFILED_AFTER`-th stored step to the end of the next one, a pass-through TorchDispatchMode
(the mechanism of torch's own FlopCounterMode) times each op it dispatches. It sees the ops below autograd, the
backward's included, each once (an op's inner calls run with the mode off). torch.profiler would give the same
counts, but its first start initialises kineto: seconds, once per process. The counts go to the store as one
`cpu_ops` row of category `op_census` (docs/FORMAT.md) whose span covers the counted step and the census's own
work, so that readers leave every step it overlaps out of the steady state (the mode makes the step slower).
While the step runs, a global forward pre-hook notes the user's line that calls the first (outermost) module:
the line `torch.compile` would serve. At the end, a few hundred small ops measure what one eager op costs on this
machine at that moment (`op_overhead_ns`): the rule weighs the op count with it. `TORCHSCOPE_CENSUS=0` turns it off; `torchscope fix` turns it off in the
runs it measures.
"""

import collections
import os
import sys
import threading
import time

from . import sites

PROFILED_AFTER = 2  # steps stored before the counted one: the first ones warm up (allocator, lazy init)
SHORT_OP_NS = 50_000  # an op shorter than this is mostly dispatch overhead (the analyzer's Facts::kSmallOpNanos)
_NAMES_KEPT = 5  # the most frequent op names in the row

_clock = time.perf_counter_ns


def enabled():
    return os.environ.get("TORCHSCOPE_CENSUS", "1").lower() not in ("0", "false", "off", "no")


class Tally:
    """The ops one step dispatched: count, time, the short ones, by name."""

    def __init__(self):
        self.ops = self.op_ns = self.short_ops = self.short_op_ns = 0
        self.by_name = collections.defaultdict(lambda: [0, 0])

    def add(self, name, nanos):
        self.ops += 1
        self.op_ns += nanos
        if nanos < SHORT_OP_NS:
            self.short_ops += 1
            self.short_op_ns += nanos
        entry = self.by_name[name]
        entry[0] += 1
        entry[1] += nanos

    def args(self):
        names = sorted(self.by_name.items(), key=lambda item: (-item[1][0], item[0]))[:_NAMES_KEPT]
        return {"ops": self.ops, "op_ns": self.op_ns, "short_ops": self.short_ops, "short_op_ns": self.short_op_ns,
                "distinct_ops": len(self.by_name),
                "frequent_ops": [{"name": name, "count": count, "ns": nanos} for name, (count, nanos) in names]}


def eager_op_cost_ns(torch):
    """What one small eager op costs here and now (Python binding, autograd, dispatcher, a trivial kernel): the
    median of 5 batches of 40 `a * b` on 4x16 tensors, one of them requiring grad. Measured beside the job, it
    scales with the machine and its load as the job's own ops do."""
    a, b = torch.ones(4, 16, requires_grad=True), torch.ones(4, 16)
    batches = []
    with torch.enable_grad():
        for _ in range(5):
            start = _clock()
            for _ in range(40):
                a * b
            batches.append((_clock() - start) // 40)
    return sorted(batches)[2]


def _counting_mode(torch, tally):
    from torch.utils._python_dispatch import TorchDispatchMode

    class OpCensusMode(TorchDispatchMode):
        counting = True

        @classmethod
        def _should_skip_dynamo(cls):
            # Else torch wraps __torch_dispatch__ in torch._dynamo.disable, whose first call imports Dynamo (seconds,
            # hundreds of MiB) into a job that compiles nothing; the census runs only in such jobs.
            return False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if not self.counting:
                return func(*args, **(kwargs or {}))
            start = _clock()
            result = func(*args, **(kwargs or {}))
            tally.add(str(func.name()), _clock() - start)
            return result

    return OpCensusMode()


class Census:
    """`step_stored(index, start_ns, end_ns, frame)` after each step stored; `record(kind, fields)` writes a row,
    `diagnostic(severity, message)` reports a failure; `compiled()` is True once the job compiled something."""

    def __init__(self, torch, record, diagnostic, compiled):
        self._torch = torch
        self._record = record
        self._diagnostic = diagnostic
        self._compiled = compiled
        self._stored = 0
        self._mode = None
        self._tally = None
        self._thread = None
        self._hook = None
        self._model_call = None
        self.done = False

    def step_stored(self, index, start_ns, end_ns, frame):
        if self.done:
            return
        try:
            if self._mode is not None:
                self._finish(index, start_ns, end_ns, frame)
                return
            self._stored += 1
            if self._stored == PROFILED_AFTER:
                self._start()
        except Exception as error:  # the census must never disturb the job
            self.done = True
            self._stop()
            self._diagnostic("warning", f"op census skipped: {type(error).__name__}: {error}")

    def skip(self):
        """A step ended outside the capture window: a census under way is dropped and starts again inside it."""
        if self._mode is not None and threading.get_ident() == self._thread:
            self._stop()
        self._stored = 0

    def _start(self):
        from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

        if self._compiled() or _get_current_dispatch_mode_stack():
            self.done = True  # a compiled job, or one with its own dispatch modes: nothing to add
            return
        self._model_call = None
        self._tally = Tally()
        self._hook = self._torch.nn.modules.module.register_module_forward_pre_hook(self._first_module_call)
        self._mode = _counting_mode(self._torch, self._tally)
        self._thread = threading.get_ident()
        self._mode.__enter__()

    def _first_module_call(self, module, args):
        if self._model_call is None:
            self._model_call = (type(module).__qualname__, sites.innermost_user(sites.stack_of(sys._getframe(1))))
            self._remove_hook()

    def _remove_hook(self):
        hook, self._hook = self._hook, None
        if hook is not None:
            hook.remove()

    def _stop(self):
        """Leaves the mode (when it is still the innermost: a job's own mode entered since is left alone, and
        ours then only passes ops through)."""
        from torch.utils._python_dispatch import _get_current_dispatch_mode

        self._remove_hook()
        mode, self._mode = self._mode, None
        if mode is None:
            return False
        mode.counting = False
        if threading.get_ident() != self._thread or _get_current_dispatch_mode() is not mode:
            return False
        mode.__exit__(None, None, None)
        return True

    def _finish(self, index, start_ns, end_ns, frame):
        if threading.get_ident() != self._thread:
            return  # another thread's step: the counted one ends on the thread that started it
        self.done = True
        if not self._stop() or self._compiled():
            return  # the step compiled (not an eager step), or the mode could not be left cleanly
        args = self._tally.args()
        args.update({"step": index, "step_ns": end_ns - start_ns, "short_op_threshold_ns": SHORT_OP_NS,
                     "op_overhead_ns": eager_op_cost_ns(self._torch)})
        model, call = self._model_call or ("", None)
        step_line = sites.innermost_user(sites.stack_of(frame)) if frame is not None else None
        for prefix, place in (("model", call), ("step", step_line)):
            args[prefix + "_file"] = place.file if place else ""
            args[prefix + "_line"] = place.line if place else -1
            args[prefix + "_function"] = place.function if place else ""
        args["model"] = model
        # The span ends now, after the census's own work, which ran in the next step's time.
        self._record("op_census", {"name": "step", "start_ns": start_ns, "end_ns": time.monotonic_ns(), "args": args})
