"""Requests: the steps of a job that runs no backward(), no optimizer and no torchscope.step() (inference).

Each call of the job's outermost module with parameters is a request, from its forward pre-hook to its forward hook,
so that a serving loop's wait for input between requests is no request's time; a torchscope.request() block replaces
those calls once the job uses one. The collector library holds each request until the next one starts (a training
job's first forward comes before its first backward(), and is then no request: collector/src/StepMarks.h).

The module is found by a global forward pre-hook that runs only until the first call of a module with parameters: it
then hooks that module alone and takes itself out, before anything is compiled (Dynamo would guard on a global hook
it traced). A module given to torch.compile before its first call is taken at once (what torch.compile returns warns
the job at each call while a global hook is set). Each request then costs two hook calls and one builtin call; once requests can never be steps (a
backward() or an optimizer was seen) the module's hooks come out too. The first request also tells whether the
transformer encoder's fast path ran, and why not (fastpath.py).
"""

import time

from . import fastpath

ITEMS_ATTRIBUTE = "requests.items"
# Autograd's state at the first request, for the analyzer's inference/no-inference-mode (docs/FORMAT.md).
GRAD_ENABLED_ATTRIBUTE = "requests.grad_enabled"
INFERENCE_MODE_ATTRIBUTE = "requests.inference_mode"


def _now():
    return time.monotonic_ns()


class Requests:
    def __init__(self, torch, marks, traced, step_ended, record):
        self._marks = marks
        self._traced = traced
        self._step_ended = step_ended
        self._record = record
        self._tensor = torch.Tensor
        self._module = None
        self._handles = []
        self._start_ns = None
        self._items = -1
        self._marked = False  # a torchscope.request() block is open
        self._torch = torch
        self._grad_mode_noted = False
        self._probe = fastpath.FastPathProbe(torch, record)
        self._global = torch.nn.modules.module.register_module_forward_pre_hook(self._first_call)

    # --- detected calls ---

    def _first_call(self, module, args):
        if self._traced() or self._module is not None or next(module.parameters(), None) is None:
            return
        self._hook(module)
        self._started(module, args, {})  # its own pre-hook runs from the next call on

    def compiled_module(self, module):
        """torch.compile(module) before the first call: that module's calls are the requests. The global hook goes
        now, since a module torch.compile returns warns the job at each call while any global hook is set."""
        if self._module is None and self._global is not None and next(module.parameters(), None) is not None:
            self._probe.skip()  # a compiled model runs no layer's Python forward
            self._hook(module)

    def _hook(self, module):
        self._module = module
        self._global.remove()
        self._global = None
        self._handles = [module.register_forward_pre_hook(self._started, with_kwargs=True),
                         module.register_forward_hook(self._ended)]

    def _started(self, module, args, kwargs):
        if self._traced():
            return
        self._start_ns = _now()
        self._items = self.items_of(args, kwargs)
        self._probe.stop()  # still watching: the first request raised before its forward hook ran
        if not self._grad_mode_noted:
            self._note_grad_mode()
            self._probe.start(module)

    def _ended(self, module, args, output):
        if self._traced() or self._start_ns is None or self._marked:
            return
        start_ns, self._start_ns = self._start_ns, None
        self._probe.stop()
        self._answer(self._marks.request(start_ns, self._items, 0), (start_ns, _now()))

    def items_of(self, args, kwargs):
        """The batch size: the first dimension of the first tensor argument, -1 when none shows it."""
        for value in (*args, *kwargs.values()):
            if isinstance(value, self._tensor):
                return int(value.shape[0]) if value.dim() > 0 else 1
        return -1

    def _note_grad_mode(self):
        self._grad_mode_noted = True
        torch = self._torch
        for key, enabled in ((GRAD_ENABLED_ATTRIBUTE, torch.is_grad_enabled()),
                             (INFERENCE_MODE_ATTRIBUTE, torch.is_inference_mode_enabled())):
            self._record("run_attributes", {"key": key, "value": "1" if enabled else "0"})

    def _answer(self, ended, running):
        """The library's answer to a request that ran over `running` (start_ns, end_ns): the one before it."""
        if ended is False:
            self.unhook()
        elif ended is not None:
            self._step_ended(*ended, running=running)

    def unhook(self):
        for handle in self._handles:
            handle.remove()
        self._handles = []
        if self._global is not None:
            self._global.remove()
            self._global = None

    # --- torchscope.request() blocks ---

    def block_started(self):
        self._marked = True
        if not self._grad_mode_noted:
            self._note_grad_mode()
        return _now()

    def block_ended(self, start_ns, items):
        self._answer(self._marks.request(start_ns, -1 if items is None else int(items), 1), (start_ns, _now()))

    # --- exit ---

    def finish(self):
        """The last request, and the requests' batch sizes as a run attribute (docs/FORMAT.md)."""
        self._probe.stop()
        ended = self._marks.flush_request()
        if ended is not None:
            self._step_ended(*ended)
        items = self._marks.request_items()
        if items:
            self._record("run_attributes", {"key": ITEMS_ATTRIBUTE, "value": items})
