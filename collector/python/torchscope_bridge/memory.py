"""Memory at step ends, beside the host RSS that the native library records with each step.

What only Python sees: the CUDA caching allocator's figures (torch.cuda.memory_stats_as_nested_dict of the
current device, once CUDA is initialised; torch's peaks are not reset, the job may read them) and, at sampled
steps, the leak evidence of holders.py. `torch.cuda.memory._record_memory_history` is not used: it
records every allocation's stack and is too costly to be on by default.
"""


from . import _settings, holders, steps

# memory_samples series (docs/FORMAT.md) -> torch.cuda.memory_stats key, whose parts are the path in
# torch.cuda.memory_stats_as_nested_dict(): read there, since memory_stats() flattens and sorts all of its 120-odd
# figures in Python at every call (about 50 us on the development VM, warm), for the nine kept here.
CUDA_SERIES = {
    "cuda.allocated": "allocated_bytes.all.current",
    "cuda.reserved": "reserved_bytes.all.current",
    "cuda.peak_allocated": "allocated_bytes.all.peak",
    "cuda.peak_reserved": "reserved_bytes.all.peak",
    "cuda.inactive_split": "inactive_split_bytes.all.current",
    "cuda.alloc_retries_count": "num_alloc_retries",
    "cuda.device_allocs_count": "num_device_alloc",
    "cuda.device_frees_count": "num_device_free",
    "cuda.ooms_count": "num_ooms",
}
_CUDA_PATHS = tuple((series, tuple(key.split("."))) for series, key in CUDA_SERIES.items())


def cuda_values(nested_stats):
    """The series of one torch.cuda.memory_stats_as_nested_dict() (figures torch does not have are left out)."""
    values = {}
    for series, path in _CUDA_PATHS:
        value = nested_stats
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None and not isinstance(value, dict):
            values[series] = int(value)
    return values


class Memory:
    """`cuda_ready()` is called once CUDA is initialised, when every step end has work (its allocator's figures)."""

    def __init__(self, abi, torch, is_user_file, stack_of, cuda_ready):
        self._abi = abi
        self._torch = torch
        self._holders = holders.Holders(is_user_file, stack_of) if _settings.flag(
            _settings.MEMORY) else None
        self._next_sampled = 1  # the leak evidence's next step (holders.is_sampled)
        self._last_end = None  # (step, end_ns) of the last step end seen here: the steps' pace
        self._cuda_ready = False  # set at once by _on_cuda_init when CUDA is initialised already
        if self._holders is not None and _on_cuda_init(torch, self._on_cuda_ready, cuda_ready):
            self._cuda_ready = True

    def _on_cuda_ready(self):
        self._cuda_ready = True

    def due_from(self):
        """The first step whose end has work here: every one once CUDA is initialised, else the next sampled one."""
        if self._holders is None:
            return steps.NEVER
        return 0 if self._cuda_ready else self._next_sampled

    def step_ended(self, step, end_ns, frame):
        torch = self._torch
        if self._holders is None or torch is None:
            return
        cuda = torch.cuda
        # is_initialized() is `_initialized and not _is_in_bad_fork()`: its first half read without a call.
        if getattr(cuda, "_initialized", True) and cuda.is_initialized():
            device = cuda.current_device()
            values = cuda_values(cuda.memory_stats_as_nested_dict(device))
            if values:
                self._abi.record("memory_samples", {"ts_ns": end_ns, "step": step, "device": device, "values": values})
        if step < self._next_sampled:
            return
        last, self._last_end = self._last_end, (step, end_ns)
        step_ns = (end_ns - last[1]) // (step - last[0]) if last is not None and step > last[0] else 0
        self._next_sampled = holders.next_sampled(step, step_ns)
        if holders.is_sampled(step):
            for evidence in self._holders.sample(step, frame, torch.Tensor):
                evidence["ts_ns"] = end_ns
                self._abi.record("memory_holders", evidence)


def _on_cuda_init(torch, *callbacks):
    """Has torch call `callbacks` when it initialises CUDA (at once when it has); True when it cannot promise to (a
    torch without `torch.cuda._lazy_call`): the caller then treats CUDA as ready. A callback never raises (torch
    fails the initialisation on an exception of a queued call)."""
    lazy_call = getattr(getattr(torch, "cuda", None), "_lazy_call", None)
    if lazy_call is None:
        return True

    def initialised():
        for callback in callbacks:
            try:
                callback()
            except Exception:
                pass

    try:
        lazy_call(initialised)
    except Exception:
        return True
    return False
