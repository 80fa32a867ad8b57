"""The transformer encoder's fast path at the first request: whether nn.TransformerEncoderLayer ran its fused kernel
(torch._transformer_encoder_layer_fwd) and, when it did not, torch's own reason.

torch decides in TransformerEncoderLayer.forward and keeps the reason in a local variable that nothing reports
(`why_not_sparsity_fast_path`: "training is enabled", "self_attn.batch_first was not True", ...). The probe reads it
where torch wrote it: a profile function set for the first request alone sees each layer's forward return and reads
that local, so the answer is torch's for the torch the job runs, not a copy of its conditions. The same function
times the layers' calls against the whole request, for the analyzer's impact estimate. It stays out of the way: not
set when the job has a profile function of its own (cProfile, a debugger), and taken out after kEventBudget events
(a first request that compiles something runs the compiler's Python, which the probe must not slow down).

Run attributes (docs/FORMAT.md): transformer.layer_calls, transformer.fast_path_calls, transformer.fast_path_reason
(the most frequent reason, absent when every call took it), transformer.layer_share.
"""

import sys
import time

LAYER_CALLS_ATTRIBUTE = "transformer.layer_calls"
FAST_PATH_CALLS_ATTRIBUTE = "transformer.fast_path_calls"
REASON_ATTRIBUTE = "transformer.fast_path_reason"
LAYER_SHARE_ATTRIBUTE = "transformer.layer_share"

_REASON_LOCAL = "why_not_sparsity_fast_path"
kEventBudget = 200_000  # about 0.1 s of profile calls


class FastPathProbe:
    def __init__(self, torch, record):
        self._record = record
        self._layer_type = getattr(torch.nn, "TransformerEncoderLayer", None)
        self._code = getattr(getattr(self._layer_type, "forward", None), "__code__", None)
        self._watching = False
        self._done = False
        self._events = 0
        self._depth = 0
        self._entered_ns = 0
        self._layer_ns = 0
        self._start_ns = 0
        self._calls = 0
        self._taken = 0
        self._reasons = {}

    def start(self, module):
        """Watches the request that starts now when `module` holds an encoder layer; once per run."""
        if self._done:
            return
        self._done = True
        if self._code is None or sys.getprofile() is not None:
            return
        if not any(isinstance(child, self._layer_type) for child in module.modules()):
            return
        self._watching = True
        self._start_ns = time.perf_counter_ns()
        sys.setprofile(self._event)

    def skip(self):
        """The requests' module is compiled: its layers' Python forward never runs, there is nothing to watch."""
        self._done = True

    def _event(self, frame, event, arg):
        self._events += 1
        if self._events > kEventBudget or not self._watching:  # not watching: stopped from another thread
            sys.setprofile(None)
            return
        if frame.f_code is not self._code:
            return
        if event == "call":
            if self._depth == 0:
                self._entered_ns = time.perf_counter_ns()
            self._depth += 1
        elif event == "return":
            self._depth -= 1
            if self._depth == 0:
                self._layer_ns += time.perf_counter_ns() - self._entered_ns
            reason = frame.f_locals.get(_REASON_LOCAL)
            if isinstance(reason, str):  # None: an exception left before torch decided
                self._calls += 1
                if reason:
                    self._reasons[reason] = self._reasons.get(reason, 0) + 1
                else:
                    self._taken += 1

    def stop(self):
        """The request ended (or the next one started, or the job exits): the probe's findings as run attributes."""
        if not self._watching:
            return
        self._watching = False
        if sys.getprofile() == self._event:
            sys.setprofile(None)
        if self._calls == 0:
            return
        request_ns = max(time.perf_counter_ns() - self._start_ns, 1)
        self._record("run_attributes", {"key": LAYER_CALLS_ATTRIBUTE, "value": str(self._calls)})
        self._record("run_attributes", {"key": FAST_PATH_CALLS_ATTRIBUTE, "value": str(self._taken)})
        self._record("run_attributes",
                     {"key": LAYER_SHARE_ATTRIBUTE, "value": f"{min(self._layer_ns / request_ns, 1.0):.4f}"})
        if self._reasons:
            reason = max(self._reasons.items(), key=lambda item: item[1])[0]
            self._record("run_attributes", {"key": REASON_ATTRIBUTE, "value": reason})
