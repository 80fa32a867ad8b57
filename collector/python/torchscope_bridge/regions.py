"""Compiled regions: what torch.compile returned, timed per call.

Each call adds its wall time to its region's running sums, split into the calls during which torch
compiled something (their time is mostly compilation) and the others; every 8th call also reads the
thread's CPU time (a system call, about ten times dearer than the monotonic clock) and, around those reads, its
own wall time, so that the CPU time of those calls is compared with their wall time, not with that of calls whose
CPU time was not read (a step's first call, the one read, can be its slowest). The sums go to the
store as one `cpu_ops` row of category `compiled_region` per region and step (docs/FORMAT.md), written
at each step end and at exit.
Dynamo frames compiled while a region's call is on the stack are attributed to the innermost one.
"""

import functools
import itertools
import threading
import time

from . import sites

_monotonic_ns = time.monotonic_ns
_thread_time_ns = time.thread_time_ns
_ids = itertools.count(1)
_CPU_SAMPLE_MASK = 7  # thread CPU time on calls 0, 8, 16, ... of each row


class Region:
    """One torch.compile result: its sums since the last row written."""

    __slots__ = ("id", "name", "site", "call_site", "call_site_sought", "frames", "frames_written", "cudagraphs",
                 "calls", "wall_ns", "cpu_ns", "cpu_wall_ns", "cpu_calls", "compile_calls", "compile_wall_ns", "first_ns",
                 "last_ns")

    def __init__(self, name, site, cudagraphs):
        self.id = next(_ids)
        self.name = name
        self.site = site
        self.cudagraphs = cudagraphs
        self.call_site = None
        self.call_site_sought = False
        self.frames = []
        self.frames_written = 0
        self._reset()

    def _reset(self):
        self.calls = self.wall_ns = self.cpu_ns = self.cpu_wall_ns = self.cpu_calls = 0
        self.compile_calls = self.compile_wall_ns = 0
        self.first_ns = self.last_ns = -1

    def row(self, step):
        """The compiled_regions row of the sums so far (None when nothing ran), and a fresh start."""
        if self.calls == 0 and self.frames_written == len(self.frames):
            return None
        row = {"region": self.id, "step": step, "calls": self.calls, "wall_ns": self.wall_ns, "cpu_ns": self.cpu_ns,
                "cpu_wall_ns": self.cpu_wall_ns, "cpu_calls": self.cpu_calls, "compile_calls": self.compile_calls,
                "compile_wall_ns": self.compile_wall_ns, "cudagraphs": self.cudagraphs,
                "frames": list(self.frames)}
        for prefix, frame in (("site", self.site), ("call", self.call_site)):
            row[prefix + "_file"] = frame.file if frame else ""
            row[prefix + "_line"] = frame.line if frame else -1
            row[prefix + "_function"] = frame.function if frame else ""
        start = self.first_ns if self.first_ns >= 0 else _monotonic_ns()
        row.update({"name": self.name, "start_ns": start, "end_ns": max(self.last_ns, start)})
        self.frames_written = len(self.frames)
        self._reset()
        return row


class Regions:
    """Every region of the process; `record(kind, fields)` stores a row, `traced()` is True inside a trace."""

    def __init__(self, record, traced):
        self._record = record
        self._traced = traced
        self.regions = []  # appended under the lock; the step end reads whether it is empty without it
        self._local = threading.local()
        self._lock = threading.Lock()
        self.compiles = 0  # compilations seen (any thread): a call that saw this change compiled

    def _active(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def timed(self, compiled, entry, name, cudagraphs=False, step_end=None):
        """A function that calls `compiled` and times it as the region of `entry` (a sites.Entry);
        `cudagraphs`: its torch.compile call asked for CUDA graphs; `step_end`: an object whose `before()`
        is called before and `after(token)` after each call that is not traced, so that the step counting
        of hooks.py shares this one wrapper (and its one trace check) on the job's hot path."""
        region = Region(name, entry.site if entry is not None else None, cudagraphs)
        with self._lock:
            self.regions.append(region)
        traced, active = self._traced, self._active

        @functools.wraps(compiled)
        def region_call(*args, **kwargs):
            if traced():
                return compiled(*args, **kwargs)
            if not region.call_site_sought:
                region.call_site_sought = True
                region.call_site = _user_caller()
            stack = active()
            stack.append(region)
            compiles = self.compiles
            step_token = step_end.before() if step_end is not None else None
            sampled = (region.calls & _CPU_SAMPLE_MASK) == 0
            if sampled:  # the wall time around the CPU reads bounds the CPU time they measure
                cpu_wall_start = _monotonic_ns()
                cpu_start = _thread_time_ns()
            start = _monotonic_ns()
            try:
                result = compiled(*args, **kwargs)
            finally:
                end = _monotonic_ns()
                if sampled:
                    cpu_end = _thread_time_ns()
                    cpu_wall_end = _monotonic_ns()
                stack.pop()
                region.calls += 1
                region.wall_ns += end - start
                if region.first_ns < 0:
                    region.first_ns = start
                region.last_ns = end
                if self.compiles != compiles:
                    region.compile_calls += 1
                    region.compile_wall_ns += end - start
                elif sampled:
                    region.cpu_ns += cpu_end - cpu_start
                    region.cpu_wall_ns += cpu_wall_end - cpu_wall_start
                    region.cpu_calls += 1
            if step_end is not None:
                step_end.after(step_token)
            return result

        return region_call

    def compiled(self, frame_id):
        """Dynamo compiled `frame_id`: it belongs to the innermost region running on this thread."""
        self.compiles += 1
        stack = self._active()
        if stack and frame_id is not None and frame_id >= 0 and frame_id not in stack[-1].frames:
            stack[-1].frames.append(frame_id)

    def write(self, step):
        """One row per region that ran (or gained a frame) since the last write; `step` ended now (-1: none)."""
        with self._lock:
            regions = list(self.regions)
        for region in regions:
            row = region.row(step)
            if row is not None:
                self._record("compiled_regions", row)

    def skip(self):
        """The step ended outside the capture window: its calls are dropped; frames compiled meanwhile are
        written with the next row."""
        with self._lock:
            for region in self.regions:
                region._reset()

    def after_fork(self):
        """A forked child writes its own calls into its own store: the parent's sums stay the parent's."""
        with self._lock:
            for region in self.regions:
                region._reset()
                region.frames_written = 0


def _user_caller():
    """The innermost frame of the user's code that calls into the region (once per region)."""
    try:
        import sys

        return sites.innermost_user(sites.stack_of(sys._getframe(2)))
    except Exception:
        return None


def region_name(compiled, target):
    """`Module.forward` for a compiled module (also through `module.compile()`, which compiles the module's
    `_call_impl`, or a compiled bound `forward`), the function's qualified name otherwise."""
    if hasattr(target, "forward") and not isinstance(target, type):
        return type(target).__qualname__ + ".forward"
    owner = getattr(target, "__self__", None)
    if getattr(target, "__name__", None) in ("_call_impl", "forward") and hasattr(owner, "forward"):
        return type(owner).__qualname__ + ".forward"
    name = getattr(target, "__qualname__", None) or getattr(compiled, "__qualname__", None)
    return name or type(target).__qualname__


def asks_for_cudagraphs(kwargs):
    """Whether torch.compile(**kwargs) asks Inductor for CUDA graphs (mode reduce-overhead or max-autotune, or
    the option triton.cudagraphs)."""
    options = kwargs.get("options")
    if isinstance(options, dict) and "triton.cudagraphs" in options:
        return options["triton.cudagraphs"] is True
    return kwargs.get("mode") in ("reduce-overhead", "max-autotune")
