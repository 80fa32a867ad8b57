"""Training steps: each optimizer step ends one.

An eager `optimizer.step()` runs its post-hooks; a compiled one runs none, so the compiled region
that steps an optimizer (torch.compile(optimizer.step), or a compiled function calling it) ends the
step when it returns; `zero_grad()` marks steps when neither is seen; `backward()` marks them when no
optimizer is used at all (a manual update such as `p.data.add_(p.grad, alpha=-lr)`); `torchscope.step()`
markers replace all of them.
"""

import threading
import time


# The step end runs after every optimizer step, cold (a step's kernels have pushed the interpreter's code and data out
# of the caches): each Python call on its path costs about a microsecond there, so the path makes few of them.
_now = time.monotonic_ns


class Steps:
    def __init__(self, record_step):
        self._record_step = record_step
        self._lock = threading.Lock()
        self.index = 0
        self.last_ns = None
        self.optimizer_id = None  # several optimizers: the first one to step marks the steps
        self.optimizer_seen = False  # optimizer steps were seen: zero_grad() no longer marks
        self.markers = False
        self.optimizer_used = False  # an optimizer's step() or zero_grad() was seen: backward() no longer marks

    def end_step(self, source):
        # Threads may mark steps at once (the GIL changes hands between any two bytecodes): each step takes its
        # index and its start under the lock, so no two share them.
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
        if self.markers:
            return
        if self.optimizer_id != optimizer_id:  # _is_tracked, inline: this runs after every optimizer step
            if self.optimizer_id is not None:
                return
            self.optimizer_id = optimizer_id
        if not self.optimizer_used:
            self._optimizer_takes_over()
        self.optimizer_seen = True
        self.end_step(b"optimizer")

    def zero_grad(self, optimizer_id):
        # Step 0 starts at the first zero_grad(); later ones mark steps only while no step was seen.
        if self.markers or self.optimizer_seen or not self._is_tracked(optimizer_id):
            return
        self._optimizer_takes_over()
        self.end_step(b"zero_grad")

    def _optimizer_takes_over(self):
        # Steps marked by backward() so far (a warm-up without an optimizer) stay; the optimizer's first mark
        # starts its first step, as it would have without them (the first backward() of an optimizer loop only
        # set a start).
        if not self.optimizer_used:
            self.optimizer_used = True
            with self._lock:
                self.last_ns = None

    def backward(self):
        """A backward() outside compiled code: ends a step while no optimizer and no marker is seen. The step
        is the time between two backward() calls, so the first one starts step 0 (a training loop's period, as
        `torchscope fix` counts it when no optimizer steps)."""
        if self.markers or self.optimizer_used:
            return
        self.end_step(b"backward")

    def marker(self):
        self.markers = True
        self.end_step(b"marker")
