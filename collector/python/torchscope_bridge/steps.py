"""Training steps: each optimizer step ends one.

An eager `optimizer.step()` runs its post-hooks; a compiled one runs none, so the compiled region
that steps an optimizer (torch.compile(optimizer.step), or a compiled function calling it) ends the
step when it returns; `zero_grad()` marks steps when neither is seen; `torchscope.step()` markers
replace all of them.
"""

import threading
import time


def _now():
    return time.monotonic_ns()


class Steps:
    def __init__(self, record_step):
        self._record_step = record_step
        self._lock = threading.Lock()
        self.index = 0
        self.last_ns = None
        self.optimizer_id = None  # several optimizers: the first one to step marks the steps
        self.optimizer_seen = False  # optimizer steps were seen: zero_grad() no longer marks
        self.markers = False

    def end_step(self, source):
        # Threads may mark steps at once, and the record call lets other threads run (ctypes drops the GIL):
        # each step takes its index and its start under the lock, so no two share them.
        with self._lock:
            now = _now()
            index, start_ns = self.index, self.last_ns
            self.last_ns = now
            if start_ns is None:
                return
            self.index += 1
        self._record_step(index, start_ns, now, source)

    def _is_tracked(self, optimizer_id):
        if self.optimizer_id is None:
            self.optimizer_id = optimizer_id
        return self.optimizer_id == optimizer_id

    def optimizer_stepped(self, optimizer_id):
        if self.markers or not self._is_tracked(optimizer_id):
            return
        self.optimizer_seen = True
        self.end_step(b"optimizer")

    def zero_grad(self, optimizer_id):
        # Step 0 starts at the first zero_grad(); later ones mark steps only while no step was seen.
        if self.markers or self.optimizer_seen or not self._is_tracked(optimizer_id):
            return
        self.end_step(b"zero_grad")

    def marker(self):
        self.markers = True
        self.end_step(b"marker")
