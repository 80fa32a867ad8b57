"""torchscope's Python bridge: records torch.compile events, steps and syncs of this interpreter.

Started by sitecustomize at interpreter start-up. It finds the collector library already
loaded in the process (LD_PRELOAD) or loads the one named by TORCHSCOPE_COLLECTOR_LIBRARY, and
hands every event to it through its C ABI (collector.h), so that one writer owns the store.
Nothing here may disturb the job: every failure is swallowed or becomes a diagnostic.
"""

import ctypes
import json
import os
import sys

from . import _settings

_UNSET = "<unset>"
_abi = None


class Abi:
    """The collector's C ABI (collector/include/torchscope/collector/collector.h)."""

    def __init__(self, library):
        self._is_active = library.torchscope_is_active
        self._is_active.restype = ctypes.c_int
        self._is_active.argtypes = []
        self._record_json = library.torchscope_record_json
        self._record_json.restype = ctypes.c_int
        self._record_json.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        self.step_builtins = _step_builtins(library)
        self._bridge_started = library.torchscope_bridge_started
        self._bridge_started.restype = None
        self._bridge_started.argtypes = []
        self._store_path = library.torchscope_store_path
        self._store_path.restype = ctypes.c_char_p
        self._store_path.argtypes = []
        self._finish = library.torchscope_finish
        self._finish.restype = None
        self._finish.argtypes = [ctypes.c_int]
        self._gpu_handover = library.torchscope_gpu_handover
        self._gpu_handover.restype = ctypes.c_int
        self._gpu_handover.argtypes = [ctypes.c_char_p]
        # ctypes.CDLL releases the GIL during these calls: the sampler's thread may need it to finish.
        self.sampler_start = library.torchscope_sampler_start
        self.sampler_start.restype = None
        self.sampler_start.argtypes = []
        self.sampler_stop = library.torchscope_sampler_stop
        self.sampler_stop.restype = None
        self.sampler_stop.argtypes = []
        self._window_rechain_signal = library.torchscope_window_rechain_signal
        self._window_rechain_signal.restype = None
        self._window_rechain_signal.argtypes = []

    def active(self):
        return self._is_active() == 1

    def record(self, kind, fields):
        return self._record_json(kind.encode(), json.dumps(fields, default=str).encode()) == 0

    def diagnostic(self, severity, message):
        self.record("diagnostics", {"severity": severity, "message": message})

    def bridge_started(self):
        self._bridge_started()

    def finish(self, exit_code):
        self._finish(exit_code)

    def gpu_handover(self, reason):
        """Stops GPU tracing for a tool that needs CUPTI; True when it was on."""
        return self._gpu_handover(reason.encode(errors="replace")) == 1

    def window_rechain_signal(self):
        self._window_rechain_signal()

    def store_path(self):
        return (self._store_path() or b"").decode(errors="replace")


def _step_builtins(library):
    """The collector's step builtins (torchscope_step_builtins, steps.py), None when it cannot make them: the step end
    runs once a training step, cold, where one builtin call costs a few microseconds and Python code or a ctypes call
    several times more (docs/performance.md, *Collector*)."""
    try:
        make = ctypes.PyDLL(library._name, handle=library._handle).torchscope_step_builtins
        make.restype = ctypes.py_object
        make.argtypes = []
        builtins = make()
    except (AttributeError, OSError, ValueError, SystemError):
        return None
    return builtins if isinstance(builtins, tuple) and all(callable(function) for function in builtins) else None


def _load_abi():
    try:
        library = ctypes.CDLL(None)
        library.torchscope_is_active  # noqa: B018 - present only when the collector is preloaded
    except (OSError, AttributeError):
        path = _settings.text(_settings.COLLECTOR_LIBRARY)
        if not path:
            return None
        try:
            library = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            return None
    try:
        abi = Abi(library)
    except AttributeError:
        return None
    return abi if abi.active() else None


def _restore_pythonpath():
    """Gives the job back the PYTHONPATH it started with (the collector prepended this directory)."""
    saved = os.environ.pop(_settings.SAVED_PYTHONPATH.name, None)
    if saved is None:
        return
    if saved == _UNSET:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = saved


def torch_import_hooks():
    """The `module:function` entries of TORCHSCOPE_TORCH_IMPORT_HOOKS, in order.

    A tool above the collector (`torchscope fix` names its runtime fixes' entry point here) has its code
    run in every traced interpreter of the job once torch is imported, without the bridge knowing it."""
    hooks = []
    for entry in _settings.entries(_settings.TORCH_IMPORT_HOOKS):
        module, _, function = entry.strip().partition(":")
        if module and function:
            hooks.append((module, function))
    return hooks


def _run_torch_import_hooks(abi):
    """Calls each hook; a hook's returned mapping becomes run attributes of the store. The folders of
    TORCHSCOPE_TORCH_IMPORT_PATH (where the tool keeps the hooks' modules) go at the end of sys.path first."""
    import importlib

    hooks = torch_import_hooks()
    for folder in _settings.entries(_settings.TORCH_IMPORT_PATH) if hooks else []:
        if folder and folder not in sys.path:
            sys.path.append(folder)
    for module, function in hooks:
        try:
            attributes = getattr(importlib.import_module(module), function)()
            for key, value in (attributes or {}).items():
                abi.record("run_attributes", {"key": str(key), "value": str(value)})
        except Exception as error:  # a broken hook must not stop the job
            abi.diagnostic("error", f"{module}:{function} failed once torch was imported: {type(error).__name__}: {error}")


def start():
    """Connects to the collector and installs the hooks; does nothing without a collector."""
    global _abi
    if _abi is not None:
        return
    abi = _load_abi()
    if abi is None:
        return
    _abi = abi
    _restore_pythonpath()
    abi.record("run", {"python_version": sys.version.split()[0]})
    from . import hooks, window

    window.install(abi)

    # Import hooks (runtime fixes) patch torch, so they wait until the job imports it: a Python child that
    # never does (Inductor's `python -c` CPU-feature checks) would otherwise pay torch's import for them.
    try:
        hooks.install(abi, lambda: _run_torch_import_hooks(abi))
    except Exception as error:
        abi.diagnostic("error", f"the Python bridge could not install its hooks: {type(error).__name__}: {error}")
        _run_torch_import_hooks(abi)
    abi.bridge_started()
    _start_stack_sampler(abi)


def _start_stack_sampler(abi):
    """Samples every thread's stack from now on (TORCHSCOPE_SAMPLE_HZ); stopped before the interpreter finalises,
    since the sampler's thread must not wait for the GIL then (registered last, so it runs first)."""
    import atexit

    try:
        abi.sampler_start()
        atexit.register(abi.sampler_stop)
        os.register_at_fork(after_in_child=abi.sampler_start)
    except Exception as error:
        abi.diagnostic("error", f"the stack sampler could not start: {type(error).__name__}: {error}")
