"""Memory at step ends, beside the host RSS that the native library records with each step.

What only Python sees: the CUDA caching allocator's figures (torch.cuda.memory_stats of the current
device, once CUDA is initialised; torch's peaks are not reset, the job may read them) and, at sampled
steps, the leak evidence of holders.py. `torch.cuda.memory._record_memory_history` is not used: it
records every allocation's stack and is too costly to be on by default.
"""

import os

from . import holders

# memory_samples series (docs/FORMAT.md) -> torch.cuda.memory_stats key.
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


def cuda_values(stats):
    """The series of one torch.cuda.memory_stats() dict (keys torch does not have are left out)."""
    return {series: int(stats[key]) for series, key in CUDA_SERIES.items() if key in stats}


class Memory:
    def __init__(self, abi, torch, is_user_file, stack_of):
        self._abi = abi
        self._torch = torch
        self._holders = holders.Holders(is_user_file, stack_of) if os.environ.get(
            "TORCHSCOPE_MEMORY", "1").lower() not in ("0", "false", "off", "no") else None
        self._next_sampled = 1  # the leak evidence's next step (holders.is_sampled)

    def step_ended(self, step, end_ns, frame):
        # The step end's cold path (steps.py): a CPU job's step between two sampled ones makes no Python call here.
        torch = self._torch
        if self._holders is None or torch is None:
            return
        cuda = torch.cuda
        # is_initialized() is `_initialized and not _is_in_bad_fork()`: its first half read without a call.
        if getattr(cuda, "_initialized", True) and cuda.is_initialized():
            device = cuda.current_device()
            values = cuda_values(cuda.memory_stats(device))
            if values:
                self._abi.record("memory", {"ts_ns": end_ns, "step": step, "device": device, "values": values})
        if step < self._next_sampled:
            return
        self._next_sampled = holders.next_sampled(step)
        if holders.is_sampled(step):
            for evidence in self._holders.sample(step, frame, torch.Tensor):
                evidence["ts_ns"] = end_ns
                self._abi.record("memory_holder", evidence)
