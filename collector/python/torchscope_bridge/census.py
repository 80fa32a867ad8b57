"""The op census: what one steady-state step of an eager job costs op by op, on the host.

Python samples cannot tell an op's dispatch overhead from its kernel (a native call's time lands on its calling
line), so for a job that has compiled nothing the bridge counts the aten ops of ONE step: from the end of the
capture window's `PROFILED_AFTER`-th stored step to the end of the next one, a pass-through TorchDispatchMode
(the mechanism of torch's own FlopCounterMode) times each op it dispatches. It sees the ops below autograd, the
backward's included, each once (an op's inner calls run with the mode off). torch.profiler would give the same
counts, but its first start initialises kineto: seconds, once per process. The counts go to the store as one
`cpu_ops` row of category `op_census` (docs/FORMAT.md) whose span covers the counted step and the census's own
work, so that readers leave every step it overlaps out of the steady state (the mode makes the step slower).
Each op is credited to a *site*, the user's line that issued it, so that advice goes where the ops come from:
inside a module call with parameters (the model), the user's line that called the outermost module, which global
forward hooks note once per outermost call; during the backward, the line that started it; else the innermost
user frame on the stack (a data-preparation loop's line), with the library function it called, if any. The time
since the previous op (Python between the ops) goes to the op's site. The first outermost module call is also
the step's `model`: the line `torch.compile` would serve. At the end, a few hundred small ops measure what one
eager op costs on this machine at that moment (`op_overhead_ns`): the rule weighs the op count with it.
`TORCHSCOPE_CENSUS=0` turns it off; `torchscope fix` turns it off in the runs it measures.
"""

import collections
import sys
import threading
import time

from . import _settings, parse, sites

PROFILED_AFTER = 2  # steps stored before the counted one: the first ones warm up (allocator, lazy init)
SHORT_OP_NS = 50_000  # an op shorter than this is mostly dispatch overhead (the analyzer's Facts::kSmallOpNanos)
_NAMES_KEPT = 5  # the most frequent op names in the row
_SITES_KEPT = 32  # the sites with the most ops in the row
_SITE_NAMES_KEPT = 3  # the most frequent op names of a site

# A site's context: inside a module call with parameters, in the backward, or elsewhere in the user's code.
MODEL, BACKWARD, OUTSIDE = "model", "backward", "outside"

_clock = time.perf_counter_ns
_RESUMABLE = 0x20 | 0x80 | 0x200  # inspect.CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR (without importing it)


def enabled():
    return _settings.flag(_settings.CENSUS)


def _most_frequent(by_name, kept):
    names = sorted(by_name.items(), key=lambda item: (-item[1][0], item[0]))[:kept]
    return [{"name": name, "count": count, "ns": nanos} for name, (count, nanos) in names]


class Site:
    """The ops one site dispatched, by op: count, time, the short ones, the Python time before them."""

    __slots__ = ("context", "code", "line", "via", "by_op")

    def __init__(self, context, code, line, via):
        self.context, self.code, self.line, self.via = context, code, line, via
        self.by_op = {}  # id(op overload) -> [op, ops, ns, short ops, short ns, gap ns]: ids, as hashing is slow

    def add(self, op, nanos, gap_ns):
        entry = self.by_op.get(id(op))
        if entry is None:
            entry = self.by_op[id(op)] = [op, 0, 0, 0, 0, 0]
        entry[1] += 1
        entry[2] += nanos
        entry[5] += gap_ns
        if nanos < SHORT_OP_NS:
            entry[3] += 1
            entry[4] += nanos

    def figures(self):
        """([ops, ns, short ops, short ns, gap ns], {name: [count, ns]})"""
        summed, by_name = [0, 0, 0, 0, 0], {}
        for op, *entry in self.by_op.values():
            for i, value in enumerate(entry):
                summed[i] += value
            by_name[str(op.name())] = [entry[0], entry[1]]
        return summed, by_name

    def args(self, figures, by_name):
        code = self.code
        return {"context": self.context, "file": code.co_filename if code else "", "line": self.line if code else -1,
                "function": code.co_name if code else "", "via": self.via or "", "ops": figures[0],
                "op_ns": figures[1], "short_ops": figures[2], "short_op_ns": figures[3], "gap_ns": figures[4],
                "frequent_ops": _most_frequent(by_name, _SITE_NAMES_KEPT)}


class Sites:
    """Which site an op belongs to, from the census thread's module calls and Python stack. What a code object
    says (the user's or not, its dotted name) is kept by its id, so that an op outside a module call walks only
    the frames between the dispatch and the user's line, and hashes no code object."""

    def __init__(self, torch):
        # id(code) -> [code, the user's?, dotted name or None, a generator's?]; holds the code, so the id stays
        self._codes = {}
        self._sites = {}  # (context, id(code), line, via) -> Site
        self._current_node = torch._C._current_autograd_node
        self._frame, self._frame_sites = None, {}  # the last op's frame and its sites
        self._frame_is_user = self._frame_kept = False
        self.module_call = None  # the Site of the outermost module call under way, None outside one
        self.first_module_call = None  # (its class, the user's Frame that called it), the step's first
        self._depth = 0

    def of_op(self, frame):
        """The Site of an op dispatched outside a module call from `frame` (the innermost Python frame that called
        torch). While `frame` runs, the frames outside it stay where they are: the sites found for it are kept by
        its position (a library function's: one for all), until an op comes from another frame. A library
        generator's frame is resumed by other callers: its ops walk the stack each time."""
        if frame is not self._frame:
            self._frame, self._frame_sites = frame, {}
            known = self._known(frame.f_code)
            self._frame_is_user, self._frame_kept = known[1], known[1] or not known[3]
        position = frame.f_lasti if self._frame_is_user else 0
        site = self._frame_sites.get(position)
        if site is None or not self._frame_kept:
            code, line, via = self._user_line(frame)
            context = BACKWARD if self._current_node() is not None else OUTSIDE
            site = self._frame_sites[position] = self._site(context, code, line, None if context == BACKWARD else via)
        return site

    def entered(self, module, frame):
        self._depth += 1
        if self._depth > 1:
            return
        code, line, _ = self._user_line(frame)
        kind = type(module)
        if self.first_module_call is None:
            caller = parse.Frame(code.co_filename, line, code.co_name) if code else None
            self.first_module_call = (kind.__qualname__, caller)
        if next(module.parameters(), None) is not None:
            self.module_call = self._site(MODEL, code, line, kind.__qualname__)
        else:  # a loss, a transform: the line that called it, as an op of that line through a library
            self.module_call = self._site(OUTSIDE, code, line, f"{kind.__module__}.{kind.__qualname__}")

    def left(self):
        if self._depth:
            self._depth -= 1
            if not self._depth:
                self.module_call = None

    def args(self):
        """The step's figures and its sites' (most ops first), for the row."""
        totals, by_name, sites_kept = [0, 0, 0, 0, 0], collections.defaultdict(lambda: [0, 0]), []
        for site in self._sites.values():
            figures, names = site.figures()
            if not figures[0]:
                continue
            for i, value in enumerate(figures):
                totals[i] += value
            for name, (count, nanos) in names.items():
                by_name[name][0] += count
                by_name[name][1] += nanos
            sites_kept.append((figures, names, site))
        sites_kept.sort(key=lambda kept: -kept[0][0])
        return {"ops": totals[0], "op_ns": totals[1], "short_ops": totals[2], "short_op_ns": totals[3],
                "distinct_ops": len(by_name), "frequent_ops": _most_frequent(by_name, _NAMES_KEPT),
                "sites": [site.args(figures, names) for figures, names, site in sites_kept[:_SITES_KEPT]]}

    def _site(self, context, code, line, via):
        key = (context, id(code), line, via)
        site = self._sites.get(key)
        if site is None:
            site = self._sites[key] = Site(context, code, line, via)
        return site

    def _user_line(self, frame):
        """(code, line, the dotted name of the library function it called) of the innermost user frame."""
        via = None
        while frame is not None:
            code = frame.f_code
            if self._known(code)[1]:
                return code, frame.f_lineno, via and self._dotted_name(via)
            via = frame
            frame = frame.f_back
        return None, -1, via and self._dotted_name(via)

    def _known(self, code):
        known = self._codes.get(id(code))
        if known is None:
            known = self._codes[id(code)] = [code, sites.scope.is_user(code.co_filename), None,
                                             bool(code.co_flags & _RESUMABLE)]
        return known

    def _dotted_name(self, frame):
        known = self._codes[id(frame.f_code)]
        if known[2] is None:
            known[2] = f"{frame.f_globals.get('__name__', '')}.{frame.f_code.co_name}"
        return known[2]


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


def _counting_mode(where):
    from torch.utils._python_dispatch import TorchDispatchMode

    class OpCensusMode(TorchDispatchMode):
        counting = True
        failure = None  # the error that stopped the count
        last_ns = _clock()  # the end of the census's work on the previous op: the Python since is the next op's

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
            end = _clock()
            try:
                site = where.module_call or where.of_op(sys._getframe(1))  # inside a module call: no stack walk
                site.add(func, end - start, start - self.last_ns)
            except Exception as error:  # never the job's: the count stops, the step gets no row
                self.counting, self.failure = False, error
            self.last_ns = _clock()
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
        self._sites = None
        self._thread = None
        self._hooks = []
        self.done = False

    def step_stored(self, index, start_ns, end_ns, frame, running=None):
        """Step `index` ran from start_ns to end_ns. `running`: the (start_ns, end_ns) of step index + 1, a request
        that ended just now: the library answers a request at the end of the next one (requests.py), so the ops
        counted since the previous answer are that one's."""
        if self.done:
            return
        try:
            if self._mode is not None:
                if running is not None:
                    index, (start_ns, end_ns) = index + 1, running
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
        self._sites = Sites(self._torch)
        modules = self._torch.nn.modules.module
        self._hooks = [modules.register_module_forward_pre_hook(self._module_entered),
                       modules.register_module_forward_hook(self._module_left, always_call=True)]
        self._mode = _counting_mode(self._sites)
        self._thread = threading.get_ident()
        self._mode.__enter__()

    def _module_entered(self, module, args):
        if threading.get_ident() == self._thread and self._mode is not None and self._mode.counting:
            try:
                self._sites.entered(module, sys._getframe(1))
            except Exception as error:  # as an op's: the count stops
                self._mode.counting, self._mode.failure = False, error

    def _module_left(self, module, args, output):
        if threading.get_ident() == self._thread and self._sites is not None:
            self._sites.left()

    def _remove_hooks(self):
        hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook.remove()

    def _stop(self):
        """Leaves the mode (when it is still the innermost: a job's own mode entered since is left alone, and
        ours then only passes ops through)."""
        from torch.utils._python_dispatch import _get_current_dispatch_mode

        self._remove_hooks()
        self._sites = None  # and what it holds: the last op's frame
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
        failure, where = self._mode.failure, self._sites
        if not self._stop() or self._compiled():
            return  # the step compiled (not an eager step), or the mode could not be left cleanly
        if failure is not None:
            self._diagnostic("warning", f"op census skipped: {type(failure).__name__}: {failure}")
            return
        args = where.args()
        args.update({"step": index, "step_ns": end_ns - start_ns, "short_op_threshold_ns": SHORT_OP_NS,
                     "op_overhead_ns": eager_op_cost_ns(self._torch)})
        model, call = where.first_module_call or ("", None)
        step_line = sites.innermost_user(sites.stack_of(frame)) if frame is not None else None
        for prefix, place in (("model", call), ("step", step_line)):
            args[prefix + "_file"] = place.file if place else ""
            args[prefix + "_line"] = place.line if place else -1
            args[prefix + "_function"] = place.function if place else ""
        args["model"] = model
        # The span ends now, after the census's own work, which ran in the next step's time.
        self._record("op_census", {"start_ns": start_ns, "end_ns": time.monotonic_ns(), **args})
