"""Collective timing on the host: torch.distributed's Python collectives and DDP's gradient buckets.

Each collective becomes a `cpu_ops` row of category `collective` (docs/FORMAT.md) from the call to its
completion, on the monotonic clock of the store. DDP's reducer calls the process group from C++, so
its all-reduces are seen through a communication hook: right after `DistributedDataParallel` is
built, a hook that runs the default all-reduce (or the hook the user registers later, which takes
its place) and notes when each bucket's future completes. Nothing is recorded while Dynamo traces.

Completion is noted by a Python callback on the collective's future, which the backend's thread (gloo's run
loop, NCCL's watchdog) runs and then frees, each time taking the GIL. A thread that takes the GIL once the
interpreter finalises is ended by pthread_exit, here inside torch's noexcept destructor of the callback:
std::terminate, and the job dies by SIGABRT at its exit ("terminate called without an active exception",
seen on a DDP rank that ended while gloo still freed its last bucket's callback). So every callback is
counted until it is freed, and the interpreter's exit waits for the count to reach zero (`_drain`).
"""

import atexit
import functools
import threading
import time
import weakref

from . import tracing

# torch.distributed functions timed from the call to their return (or their work's completion).
_COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
                "broadcast", "reduce", "all_to_all", "all_to_all_single", "gather", "scatter", "barrier",
                "all_gather_object", "broadcast_object_list")

_record = None
_torch = None
_traced = tracing.not_traced
_inside = threading.local()  # set while a timed collective runs: the collectives it calls are its own
# Weak references to the completion callbacks not yet freed by the thread that completes their future.
_live_callbacks = set()
# The longest the interpreter's exit waits for them: a collective whose peers died never completes.
_DRAIN_LIMIT_S = 2.0


def _then(future, callback):
    """future.then(callback), the callback counted until it is freed."""
    reference = weakref.ref(callback, _live_callbacks.discard)
    _live_callbacks.add(reference)
    try:
        return future.then(callback)
    except Exception:
        _live_callbacks.discard(reference)
        raise


def _drain(limit_s=_DRAIN_LIMIT_S):
    """Waits, with the GIL let go, until the backends' threads have run and freed every completion callback."""
    deadline = time.monotonic() + limit_s
    while _live_callbacks and time.monotonic() < deadline:
        time.sleep(0.001)
    return not _live_callbacks


def _tensor_bytes(value):
    if isinstance(value, _torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(_tensor_bytes(item) for item in value)
    return 0


def _backend(group):
    try:
        return str(_torch.distributed.get_backend(group))
    except Exception:
        return ""


def _emit(name, start_ns, tid, args):
    try:
        _record("collectives", {"name": name, "start_ns": start_ns, "end_ns": time.monotonic_ns(), "tid": tid,
                                **args})
    except Exception:
        pass


def _timed(name, original):
    @functools.wraps(original)
    def collective(*args, **kwargs):
        # Must stay first: under torch.compile Dynamo folds this to a constant and traces the original.
        if _traced() or getattr(_inside, "active", False):
            return original(*args, **kwargs)
        start_ns = time.monotonic_ns()
        tid = threading.get_native_id()
        _inside.active = True
        try:
            result = original(*args, **kwargs)
        finally:
            _inside.active = False
        details = {"op": name, "backend": _backend(kwargs.get("group")), "source": "torch.distributed",
                   "bytes": _tensor_bytes(args[0]) if args else 0, "async": bool(kwargs.get("async_op"))}
        if result is not None and kwargs.get("async_op") and hasattr(result, "get_future"):
            try:
                _then(result.get_future(), lambda future: _emit(name, start_ns, tid, details))
                return result
            except Exception:
                pass
        _emit(name, start_ns, tid, details)
        return result

    return collective


class _HookSlot:
    """The hook DDP calls: the default all-reduce until the user registers one of their own."""

    def __init__(self, process_group):
        self.state = process_group
        self.hook = None


def _bucket_hook(slot, bucket):
    start_ns = time.monotonic_ns()
    tid = threading.get_native_id()
    _inside.active = True
    try:
        future = _average(slot.state, bucket) if slot.hook is None else slot.hook(slot.state, bucket)
    finally:
        _inside.active = False
    buffer = bucket.buffer()
    details = {"op": "allreduce", "backend": _backend(slot.state if slot.hook is None else None), "source": "ddp",
               "bytes": buffer.numel() * buffer.element_size(), "bucket": bucket.index(),
               "last_bucket": bool(bucket.is_last())}
    default = slot.hook is None

    def completed(done):
        _emit("ddp:allreduce", start_ns, tid, details)
        # The default all-reduce's future holds the list of its one tensor; a hook's, the tensor.
        return done.value()[0] if default else done.value()

    return _then(future, completed)


def _average(process_group, bucket):
    """DDP's default all-reduce of a bucket (default_hooks.allreduce_hook) without its own Python callback, which
    would be one more that the backend's thread frees uncounted."""
    group = process_group if process_group is not None else _torch.distributed.group.WORLD
    tensor = bucket.buffer()
    tensor.div_(group.size())  # first, as torch does: no overflow in half precision
    return _torch.distributed.all_reduce(tensor, group=group, async_op=True).get_future()


def _hook_ddp(ddp_class):
    original_init = ddp_class.__init__
    original_register = ddp_class.register_comm_hook
    original_register_builtin = ddp_class._register_builtin_comm_hook

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):  # noqa: N807 - replaces DistributedDataParallel.__init__
        original_init(self, *args, **kwargs)
        reducer = getattr(self, "reducer", None)
        if reducer is None or _traced():
            return
        try:
            slot = _HookSlot(self.process_group)
            _torch.distributed._register_comm_hook(reducer, slot, _bucket_hook)
            self._torchscope_hook_slot = slot
        except Exception:
            pass

    @functools.wraps(original_register)
    def register_comm_hook(self, state, hook):
        slot = getattr(self, "_torchscope_hook_slot", None)
        if slot is None or slot.hook is not None:
            return original_register(self, state, hook)
        # The reducer takes one hook: the user's runs inside the timing one, with DDP's own checks.
        self._check_comm_hook(hook)
        self.logger._set_comm_hook_name(hook.__qualname__)
        self._comm_hooks.append((hook, state))
        slot.state, slot.hook = state, hook
        return None

    @functools.wraps(original_register_builtin)
    def _register_builtin_comm_hook(self, comm_hook_type):
        slot = getattr(self, "_torchscope_hook_slot", None)
        if slot is None or slot.hook is not None:
            return original_register_builtin(self, comm_hook_type)
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        builtin = _torch.distributed.BuiltinCommHookType
        python_hooks = {builtin.ALLREDUCE: default_hooks.allreduce_hook,
                        builtin.FP16_COMPRESS: default_hooks.fp16_compress_hook}
        if comm_hook_type not in python_hooks:
            return original_register_builtin(self, comm_hook_type)
        self.logger._set_comm_hook_name(str(comm_hook_type))
        slot.hook = python_hooks[comm_hook_type]
        return None

    ddp_class.__init__ = __init__
    ddp_class.register_comm_hook = register_comm_hook
    ddp_class._register_builtin_comm_hook = _register_builtin_comm_hook


def install(torch, record):
    """Times torch.distributed's collectives and DDP's buckets; `record(kind, fields)` stores a row."""
    global _record, _torch, _traced
    if not torch.distributed.is_available():
        return
    _record, _torch, _traced = record, torch, tracing.checker(torch)
    distributed = torch.distributed
    for name in _COLLECTIVES:
        original = getattr(distributed, name, None)
        if original is not None:
            setattr(distributed, name, _timed(name, original))
    from torch.nn.parallel import distributed as ddp_module
    _hook_ddp(ddp_module.DistributedDataParallel)
    atexit.register(_drain)  # exit functions run before the interpreter finalises
