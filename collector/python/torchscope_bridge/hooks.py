"""The bridge's hooks into torch: structured-trace events, torch.compile and optimizer call sites,
optimizer steps, sync warnings.

torch is never imported by the bridge itself: the hooks go in right after the job imports it,
so a job that does not use torch pays nothing and import order stays the job's own.
"""

import atexit
import functools
import importlib
import importlib.util
import json
import logging
import os
import re
import signal
import sys
import threading
import time
import types

from . import _settings, census, collectives, memory, parse, regions, requests, sites, steps, tracing

_MIN_TORCH = (2, 5)
_SYNC_WARNING = "called a synchronizing CUDA operation"
_SYNC_OPS = re.compile(r"\.(item|cpu|tolist|numpy|nonzero|repeat_interleave|to|cuda|any|all)\(")

_abi = None
_torch = None
_traced = tracing.not_traced  # tracing.checker(torch) once torch is imported
_dynamo_traced = tracing.not_traced  # tracing.dynamo_checker(torch): for wrappers of compiled code
_optimizer_type = ()
_prefixes = ()  # torch's and the bridge's folders: frames a sync's stack leaves out
_lock = threading.Lock()
# Recompiles wait for their compile's metrics (code object, cache size, limit), keyed by compile id.
_pending_recompiles = {}
_cache_hits = {}
# The code object of each frame id, for compiles that torch reports without one (a limit hit).
_frame_code = {}
_limit_messages = []
_memory = None  # memory.Memory once torch is imported
_after_torch_imported = None  # install()'s callback, run once
_regions = None  # regions.Regions once torch is imported
_census = None  # census.Census once torch is imported (an eager job's op census)
_requests = None  # requests.Requests once torch is imported: an inference job's steps
_compiled_anything = False  # torch.compile was called or a frame compiled: no census


def _now():
    return time.monotonic_ns()


def _wall_to_monotonic_ns():
    return time.monotonic_ns() - time.time_ns()


def _ids(metadata):
    return {key: metadata.get(key) for key in ("frame_id", "frame_compile_id", "attempt", "compiled_autograd_id")}


def _key(metadata):
    return metadata.get("frame_id"), metadata.get("frame_compile_id")


# --- structured trace -------------------------------------------------------------------------


class TraceHandler(logging.Handler):
    """Receives torch's structured-trace records (the `torch.__trace` logger) in process."""

    def emit(self, record):
        try:
            metadata = getattr(record, "metadata", None)
            if not isinstance(metadata, dict):
                return
            if "compilation_metrics" in metadata:
                _on_compilation_metrics(metadata)
                return
            artifact = metadata.get("artifact")
            if not isinstance(artifact, dict):
                return
            name = artifact.get("name", "")
            payload = getattr(record, "payload", None) or ""
            if name == "dynamo_graph_break_reason":
                _on_graph_break(metadata, payload)
            elif name == "recompile_reasons":
                _on_recompile_reasons(metadata, payload)
            elif name.startswith("fx_graph_cache_"):
                _cache_hits[_key(metadata)] = 1 if name.endswith("_hit") else 0
        except Exception:  # never disturb torch's logging
            pass

    def handleError(self, record):  # noqa: N802 - logging's API
        pass


def _on_graph_break(metadata, payload):
    fields = parse.graph_break(payload, sites.scope)
    fields.update(_ids(metadata))
    fields["ts_ns"] = _now()
    _abi.record("graph_breaks", fields)


def _locate_recompile(fields, reasons):
    """The user's side of a recompile, read from the live stack: the calling code, the torch.compile
    call of the region and, for a guard on a Python number, where that number comes from."""
    context = sites.CompileContext(sys._getframe())
    fields["stack"] = [frame.as_dict() for frame in context.stack]
    entry = context.entry()
    if entry is not None:
        fields["entry_file"], fields["entry_line"] = entry.site.file, entry.site.line
    source = sites.value_source(context, reasons, _optimizer_type)
    if source is not None:
        fields["value_kind"], fields["value_file"], fields["value_line"] = source[0], source[1].file, source[1].line


def _on_recompile_reasons(metadata, payload):
    fields = _ids(metadata)
    fields["ts_ns"] = _now()
    reasons = parse.guard_reasons(payload)
    fields["guard_failures"] = [reason["guard"] for reason in reasons]
    try:
        _locate_recompile(fields, reasons)
    except Exception as error:  # the recompile itself is still recorded
        _abi.diagnostic("warning", "a recompile could not be located in the user's code: "
                                   f"{type(error).__name__}: {error}")
    with _lock:
        _pending_recompiles[_key(metadata)] = fields


def _on_compilation_metrics(metadata):
    global _compiled_anything
    _compiled_anything = True
    metrics = metadata["compilation_metrics"]
    key = _key(metadata)
    fields = parse.compile_record(metrics, _ids(metadata), _wall_to_monotonic_ns(), _cache_hits.pop(key, -1))
    code = {name: fields[name] for name in ("co_name", "co_filename", "co_firstlineno")}
    if code["co_name"]:
        _frame_code[fields["frame_id"]] = code
    if code["co_name"] == "step":
        _note_optimizer_region()
    if _regions is not None:
        _regions.compiled(fields["frame_id"])
    _abi.record("compiles", fields)
    with _lock:
        recompile = _pending_recompiles.pop(key, None)
    if recompile is None:
        return
    for name in ("co_name", "co_filename", "co_firstlineno", "cache_size"):
        if fields[name] not in ("", -1):
            recompile[name] = fields[name]
    if "cache_size" not in recompile:
        recompile["cache_size"] = recompile["frame_compile_id"]
    recompile["message"] = fields["fail_reason"]
    _record_recompile(recompile)


def _note_optimizer_region():
    """An optimizer's step() was compiled: its compiled region ends a training step each time it returns."""
    try:
        context = sites.CompileContext(sys._getframe())
        optimizer = context.compiling_self()
        entry = context.entry()
        if entry is not None and isinstance(optimizer, _optimizer_type):
            entry.optimizer_id = id(optimizer)
    except Exception:
        pass


def _record_recompile(fields):
    for name, value in _frame_code.get(fields.get("frame_id"), {}).items():
        fields.setdefault(name, value)
    code = fields.get("co_name"), fields.get("co_filename")
    for message in _limit_messages:
        site = parse.limit_warning_site(message)
        if site and site[:2] == code:
            fields["limit_hit"] = 1
    _abi.record("recompiles", fields)


class LimitWarningFilter(logging.Filter):
    """Notes torch's "hit config.recompile_limit" warning; the warning itself is left alone."""

    def filter(self, record):
        try:
            message = record.getMessage()
            if "recompile_limit" in message or "cache_size_limit" in message:
                _limit_messages.append(message)
        except Exception:
            pass
        return True


# The structured-trace events the handler reads; torch builds every other event's payload (printed
# graphs, generated code, guards) only for whoever listens, at a cost that differs between variants
# of a job, so when ours is the only handler the others are not built at all.
_TRACE_EVENTS = ("compilation_metrics",)
_TRACE_ARTIFACTS = ("dynamo_graph_break_reason", "recompile_reasons")
_TRACE_ARTIFACT_PREFIXES = ("fx_graph_cache_",)


def _wanted_artifact(metadata):
    name = metadata.get("name", "") if isinstance(metadata, dict) else ""
    return name in _TRACE_ARTIFACTS or name.startswith(_TRACE_ARTIFACT_PREFIXES)


def _filter_trace_events(internal, handler):
    """Puts a filter in front of torch's trace_structured, in torch._logging and in every module
    that imported it by name already (modules imported later take the filtered one)."""
    original = internal.trace_structured

    @functools.wraps(original)
    def trace_structured(name, metadata_fn=dict, **kwargs):
        if any(other is not handler for other in internal.trace_log.handlers):  # TORCH_TRACE or the user's own
            return original(name, metadata_fn, **kwargs)
        if name == "artifact":
            metadata = metadata_fn()
            if not _wanted_artifact(metadata):
                return None
            return original(name, lambda: metadata, **kwargs)
        if name not in _TRACE_EVENTS:
            return None
        return original(name, metadata_fn, **kwargs)

    for module in list(sys.modules.values()):
        try:
            if getattr(module, "trace_structured", None) is original:
                module.trace_structured = trace_structured
        except Exception:
            pass


def _attach_trace_handler():
    from torch._logging import _internal

    handler = TraceHandler()
    _filter_trace_events(_internal, handler)

    def attach():
        if handler not in _internal.trace_log.handlers:
            _internal.trace_log.addHandler(handler)
        if _internal.trace_log.level != logging.DEBUG:
            _internal.trace_log.setLevel(logging.DEBUG)

    attach()
    # torch._logging.set_logs() clears the trace logger's handlers: put ours back each time.
    original_init_logs = _internal._init_logs

    def init_logs(*args, **kwargs):
        result = original_init_logs(*args, **kwargs)
        attach()
        return result

    _internal._init_logs = init_logs
    logging.getLogger("torch._dynamo.convert_frame").addFilter(LimitWarningFilter())


# --- steps, optimizers and torch.compile calls ----------------------------------------------


def _step_ended(index, start_ns, end_ns, stored, running=None):
    """The bridge's own work at a step end, when due (steps.py): the regions' calls and the op census of that step
    (dropped when it is outside the capture window, `stored` False: their compiled frames wait for the next row),
    the CUDA allocator's figures and the leak evidence (memory.py). The native side records the step and the host
    RSS. Then asks for the next step that has work. `running`: a request is answered one behind, at the end of the
    next one (requests.py), whose (start_ns, end_ns) this is: the regions' calls and the ops the census counted since
    are that one's."""
    frame = sys._getframe(1)
    if not stored:
        if _regions is not None and _regions.regions:
            _regions.skip()
        if _census is not None and not _census.done:
            _census.skip()
    else:
        if _regions is not None and _regions.regions:
            _regions.write(index if running is None else index + 1)
        if _census is not None and not _census.done:
            _census.step_stored(index, start_ns, end_ns, frame, running)
        if _memory is not None:
            try:
                _memory.step_ended(index, end_ns, frame)
            except Exception as error:  # memory capture must not stop the job
                _abi.diagnostic("warning", f"memory capture stopped: {type(error).__name__}: {error}")
                _stop_memory()
    _marks.follow_up_from(*_next_follow_up())


def _next_follow_up():
    """(the first step index whose end has work in Python, whether steps outside the capture window have some too):
    every step once a compiled region is timed or while the op census runs (their calls of a step outside the window
    are dropped), else memory's next step inside the window (steps.NEVER without it)."""
    if (_regions is not None and _regions.regions) or (_census is not None and not _census.done):
        return 0, True
    return (_memory.due_from() if _memory is not None else steps.NEVER), False


def _follow_up_every_step():
    if _marks is not None:
        _marks.follow_up_from(0, True)


def _stop_memory():
    global _memory
    _memory = None


def _is_user_file(path):
    return sites.scope.is_user(path) and not parse.is_internal(path, _prefixes)



_marks = None  # steps.Marks, the library's step builtins, once installed
_optimizer_stepped = None  # _marks.optimizer_stepped, a global: read after every optimizer step


def _on_optimizer_step(optimizer, args, kwargs):
    # Must stay first: under torch.compile Dynamo folds this to a constant and traces nothing else. Only Dynamo
    # traces the step hooks' calls (AOTAutograd and export trace graphs and forwards), so they ask it alone.
    if _dynamo_traced():
        return
    ended = _optimizer_stepped(id(optimizer))
    if ended is not None:
        _step_ended(*ended)


def _hook_zero_grad(optimizer_class):
    """zero_grad() marks steps when no optimizer step is seen."""
    original_zero_grad = optimizer_class.zero_grad

    @functools.wraps(original_zero_grad)
    def zero_grad(self, *args, **kwargs):
        # After the trace check, so that Dynamo guards on nothing of ours.
        if not _dynamo_traced() and _zero_grad_marks:
            ended = _marks.zero_grad(id(self))
            if ended:
                _step_ended(*ended)
            elif ended is False:  # an optimizer step was seen: zero_grad() never marks again
                _stop_marking("zero_grad")
        return original_zero_grad(self, *args, **kwargs)

    _marking_wrappers["zero_grad"] = (optimizer_class, "zero_grad", zero_grad, original_zero_grad)
    optimizer_class.zero_grad = zero_grad


def _hook_optimizer_init(optimizer_class):
    """__init__ notes where the user creates an optimizer."""
    original_init = optimizer_class.__init__

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):  # noqa: N807 - replaces Optimizer.__init__
        original_init(self, *args, **kwargs)
        if not _traced():
            try:
                sites.note_optimizer(self, sys._getframe(1))
            except Exception:
                pass

    optimizer_class.__init__ = __init__


def _hook_backward(torch):
    """Tensor.backward() ends a step while no optimizer is used (a manual update of the parameters)."""
    original = torch.Tensor.backward

    @functools.wraps(original)
    def backward(self, *args, **kwargs):
        # Must stay first: under torch.compile Dynamo folds this to a constant and traces nothing else.
        if _dynamo_traced() or not _backward_marks:
            return original(self, *args, **kwargs)
        result = original(self, *args, **kwargs)
        ended = _marks.backward()  # marks a step only while no optimizer is used (steps.py)
        if ended:
            _step_ended(*ended)
        elif ended is False:  # an optimizer or a marker took over: backward() never marks again
            _stop_marking("backward")
        return result

    _marking_wrappers["backward"] = (torch.Tensor, "backward", backward, original)
    torch.Tensor.backward = backward


# The wrappers of torch's methods whose calls mark steps only until an optimizer or markers take over: name ->
# (owner, attribute, wrapper, original); and whether each still asks the library.
_marking_wrappers = {}
_zero_grad_marks = True
_backward_marks = True


def _stop_marking(name):
    """zero_grad() or backward() can never mark a step again in this process: its wrapper stops asking, and torch gets
    its own method back, so that a training step pays for the optimizer's hook alone (docs/performance.md). Not once
    anything was compiled: Dynamo may have traced the wrapper and guard on it."""
    global _zero_grad_marks, _backward_marks
    if name == "zero_grad":
        _zero_grad_marks = False
    else:
        _backward_marks = False
    owner, attribute, wrapper, original = _marking_wrappers[name]
    if not _compiled_anything and getattr(owner, attribute, None) is wrapper:
        setattr(owner, attribute, original)


def _mark_again_after_fork():
    """A fork child's steps start afresh (its loop may use no optimizer): the wrappers go back in, unless anything
    was compiled (Dynamo's guards in the child may hold the originals)."""
    global _zero_grad_marks, _backward_marks
    _zero_grad_marks = _backward_marks = True
    for owner, attribute, wrapper, original in _marking_wrappers.values():
        if not _compiled_anything and getattr(owner, attribute, None) is original:
            setattr(owner, attribute, wrapper)


class _CompiledStepEnd:
    """Ends a training step after a call of a compiled function once its region is known to step an
    optimizer (a compiled step runs no optimizer hooks) and the call itself ended none."""

    def __init__(self, entry):
        self._entry = entry

    def before(self):
        return _marks.next_step_index()

    def after(self, steps_before):
        if self._entry.optimizer_id is not None and _marks.next_step_index() == steps_before:
            ended = _marks.optimizer_stepped(self._entry.optimizer_id)
            if ended is not None:
                _step_ended(*ended)


def _step_counting(compiled, step_end):
    """The compiled function with step counting alone, when region timing is off (TORCHSCOPE_REGIONS=0)."""
    traced = _dynamo_traced

    @functools.wraps(compiled)
    def compiled_call(*args, **kwargs):
        if traced():
            return compiled(*args, **kwargs)
        steps_before = step_end.before()
        result = compiled(*args, **kwargs)
        step_end.after(steps_before)
        return result

    return compiled_call


def _hook_compile(torch):
    """torch.compile notes where the user calls it, so that a recompile can name that line, and times
    what it returns as a compiled region (regions.py)."""
    original = torch.compile

    @functools.wraps(original)
    def compile(*args, **kwargs):  # noqa: A001 - replaces torch.compile
        global _compiled_anything
        _compiled_anything = True
        _follow_up_every_step()  # the regions' calls are written at each step end
        compiled = original(*args, **kwargs)
        try:
            target = args[0] if args else kwargs.get("model")
            if target is None or compiled is target:
                return compiled  # a decorator factory, or compilation disabled
            entry = sites.note_compile(compiled, sys._getframe(1))
            name, cudagraphs = regions.region_name(compiled, target), regions.asks_for_cudagraphs(kwargs)
            if isinstance(compiled, types.FunctionType):
                step_end = _CompiledStepEnd(entry) if entry is not None else None
                if _regions is not None:
                    return _regions.timed(compiled, entry, name, cudagraphs, step_end)
                return _step_counting(compiled, step_end) if step_end is not None else compiled
            if _regions is not None and callable(getattr(compiled, "forward", None)):
                compiled.forward = _regions.timed(compiled.forward, entry, name, cudagraphs)  # an OptimizedModule
            if _requests is not None and isinstance(compiled, torch.nn.Module):
                _requests.compiled_module(compiled)
        except Exception:
            pass
        return compiled

    torch.compile = compile


def request_started():
    """torchscope.request(): a block that is one request (requests.py); its start, None outside torchscope."""
    if _requests is None or _traced():
        return None
    return _requests.block_started()


def request_ended(start_ns, items):
    if _requests is not None and start_ns is not None and not _traced():
        _requests.block_ended(start_ns, items)


def mark_step():
    """torchscope.step(): the end of one training step."""
    if _marks is None or _traced():
        return
    ended = _marks.marker()
    if ended is not None:
        _step_ended(*ended)


# --- the job's own torch.profiler ----------------------------------------------------------------


def _hook_profiler(torch):
    """CUPTI serves one tool at a time: when the job starts torch.profiler with CUDA activities, the collector
    hands GPU tracing over (flushing what it traced) instead of both fighting over CUPTI's buffers, which
    would leave the job's profiler, or the store, with GPU records missing and no word of it."""
    profile = torch.autograd.profiler.profile
    cuda = torch._C._profiler.ProfilerActivity.CUDA
    # torch.profiler.profile prepares the trace (where kineto takes CUPTI) in its warm-up, then starts it;
    # torch.autograd.profiler.profile's __enter__ does both.
    for name in ("_prepare_trace", "_start_trace"):
        original = getattr(profile, name, None)
        if original is not None:
            setattr(profile, name, _handing_gpu_over(original, cuda))


def _handing_gpu_over(original, cuda):
    @functools.wraps(original)
    def start(self, *args, **kwargs):
        try:
            if cuda in getattr(self, "kineto_activities", ()):
                where = sites.innermost_user(sites.stack_of(sys._getframe(1)))
                at = f" at {where.file}:{where.line}" if where is not None else ""
                _abi.gpu_handover(f"the job started torch.profiler{at}")
        except Exception:  # the job's profiler starts whatever happens here
            pass
        return original(self, *args, **kwargs)

    return start


# --- host-device syncs ------------------------------------------------------------------------


def _sync_stack():
    """The stack of a sync warning without torch's, the bridge's and the warnings module's frames."""
    return [frame for frame in sites.stack_of(sys._getframe(1))
            if not parse.is_internal(frame.file, _prefixes) and not frame.file.endswith("/warnings.py")]


def _enable_sync_warnings():
    """torch's sync debug mode "warn": each synchronizing op becomes a Sync row, not a printed warning."""
    set_mode = getattr(_torch._C, "_cuda_set_sync_debug_mode", None)
    if set_mode is None or not _torch.version.cuda:
        return
    import linecache
    import warnings

    set_mode(1)  # set directly: torch.cuda.set_sync_debug_mode() would initialise CUDA now
    warnings.filterwarnings("always", message=_SYNC_WARNING)
    original_showwarning = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if _SYNC_WARNING not in str(message):
            return original_showwarning(message, category, filename, lineno, file, line)
        try:
            stack = _sync_stack()
            site = sites.innermost_user(stack) or (stack[-1] if stack else parse.Frame(filename, lineno, ""))
            op = _SYNC_OPS.search(linecache.getline(site.file, site.line))
            now = _now()
            _abi.record("syncs", {"start_ns": now, "end_ns": now, "sync_kind": "python",
                                 "op": op.group(1) if op else "", "file": site.file, "line": site.line,
                                 "function": site.function, "stack": [frame.as_dict() for frame in stack]})
        except Exception:
            pass
        return None

    warnings.showwarning = showwarning


# --- start-up and exit ------------------------------------------------------------------------


def _version_tuple(version):
    numbers = re.findall(r"\d+", str(version).split("+")[0])[:2]
    return tuple(int(number) for number in numbers)


def _record_code_roots(torch):
    scope = sites.discover_roots(torch)
    for key, roots in (("code.user_roots", scope.user_roots), ("code.library_roots", scope.library_roots)):
        _abi.record("run_attributes", {"key": key, "value": json.dumps(list(roots))})


def _run_after_torch_imported():
    global _after_torch_imported
    callback, _after_torch_imported = _after_torch_imported, None
    if callback is not None:
        callback()


def _on_torch_imported(torch):
    try:
        _hook_torch(torch)
    finally:
        _run_after_torch_imported()


def _hook_torch(torch):
    global _torch, _traced, _dynamo_traced, _prefixes, _optimizer_type, _memory, _regions, _census, _requests
    try:
        version = str(getattr(torch, "__version__", ""))
        cuda = getattr(getattr(torch, "version", None), "cuda", None) or ""
        _abi.record("run", {"torch_version": version, "cuda_version": cuda})
        _record_code_roots(torch)
        if _version_tuple(version) < _MIN_TORCH:
            _abi.diagnostic("warning", f"torch {version} is older than 2.5: compile events were not recorded")
            return
        _torch = torch
        _traced, _dynamo_traced = tracing.checker(torch), tracing.dynamo_checker(torch)
        _prefixes = parse.internal_prefixes(torch)
        _memory = memory.Memory(_abi, torch, _is_user_file, sites.stack_of, _follow_up_every_step)
        if _settings.flag(_settings.REGIONS):
            _regions = regions.Regions(_abi.record, _dynamo_traced)
        if census.enabled():
            _census = census.Census(torch, _abi.record, _abi.diagnostic, lambda: _compiled_anything)
        _attach_trace_handler()
        optimizer_module = importlib.import_module("torch.optim.optimizer")
        _optimizer_type = optimizer_module.Optimizer
        if _marks is not None:
            optimizer_module.register_optimizer_step_post_hook(_on_optimizer_step)
            _hook_zero_grad(_optimizer_type)
            _hook_backward(torch)
            _requests = requests.Requests(torch, _marks, _traced, _step_ended, _abi.record)
        _hook_optimizer_init(_optimizer_type)
        _hook_compile(torch)
        _hook_profiler(torch)
        _enable_sync_warnings()
        if _settings.flag(_settings.COLLECTIVES):
            collectives.install(torch, _abi.record)
    except Exception as error:
        _abi.diagnostic("error", f"the Python bridge could not hook into torch: {type(error).__name__}: {error}")


class TorchImportWatcher:
    """A meta-path finder that runs the torch hooks as soon as `import torch` has finished."""

    def __init__(self):
        self._searching = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" or self._searching:
            return None
        self._searching = True
        try:
            spec = None
            for finder in sys.meta_path:
                find_spec = getattr(finder, "find_spec", None)
                if finder is self or find_spec is None:
                    continue
                spec = find_spec(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._searching = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        loader = spec.loader
        original_exec_module = loader.exec_module

        def exec_module(module):
            original_exec_module(module)
            _on_torch_imported(module)

        loader.exec_module = exec_module
        return spec


def _record_devices():
    if _torch is None or not _torch.cuda.is_available() or not _torch.cuda.is_initialized():
        return
    for index in range(_torch.cuda.device_count()):
        props = _torch.cuda.get_device_properties(index)
        _abi.record("devices", {"device": index, "name": props.name, "compute_major": props.major,
                               "compute_minor": props.minor, "total_memory_bytes": props.total_memory,
                               "multiprocessor_count": props.multi_processor_count})
        if index == _torch.cuda.current_device():
            _abi.record("run", {"gpu_name": props.name})


def _at_exit():
    try:
        with _lock:
            pending = list(_pending_recompiles.values())
            _pending_recompiles.clear()
        for fields in pending:
            _record_recompile(fields)
        if _requests is not None:
            _requests.finish()
        if _regions is not None:
            _regions.write(-1)
        _record_devices()
        # After an uncaught KeyboardInterrupt the interpreter finalises and then kills itself with
        # SIGINT, which runs no C exit handler: close the store while Python still runs this.
        last = getattr(sys, "last_type", None)
        if isinstance(last, type) and issubclass(last, KeyboardInterrupt):
            _abi.finish(128 + signal.SIGINT)
    except Exception:
        pass


def _after_fork_in_child():
    if _marks is not None:
        _marks.reset_after_fork()  # and follows every step up until the first one says otherwise
        _mark_again_after_fork()
    sites.forget_after_fork()
    if _regions is not None:
        _regions.after_fork()
    if _census is not None:
        _census.done = True  # the parent's profiler state is not the child's
    _pending_recompiles.clear()
    _cache_hits.clear()
    _frame_code.clear()


def install(abi, after_torch_imported=None):
    """Installs the hooks; `after_torch_imported()` runs once the job has imported torch (at once
    when it has already), after the torch hooks, or at once when torch is not installed."""
    global _abi, _after_torch_imported, _marks, _optimizer_stepped
    _abi = abi
    _after_torch_imported = after_torch_imported
    if abi.step_builtins is None:
        abi.diagnostic("warning", "the collector could not make its step builtins: no steps were recorded")
    else:
        _marks = steps.Marks(abi.step_builtins)
        _optimizer_stepped = _marks.optimizer_stepped
    atexit.register(_at_exit)
    os.register_at_fork(after_in_child=_after_fork_in_child)
    if "torch" in sys.modules:
        _on_torch_imported(sys.modules["torch"])
    elif importlib.util.find_spec("torch") is None:
        abi.diagnostic("warning", f"torch is not installed for {sys.executable}: "
                                  "no compile, graph-break or step events were recorded")
        _run_after_torch_imported()
    else:
        sys.meta_path.insert(0, TorchImportWatcher())
