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
        self._record_step = library.torchscope_record_step
        self._record_step.restype = ctypes.c_int
        self._record_step.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_char_p]
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

    def active(self):
        return self._is_active() == 1

    def record(self, kind, fields):
        return self._record_json(kind.encode(), json.dumps(fields, default=str).encode()) == 0

    def step(self, index, start_ns, end_ns, source):
        self._record_step(index, start_ns, end_ns, source)

    def diagnostic(self, severity, message):
        self.record("diagnostic", {"severity": severity, "message": message})

    def bridge_started(self):
        self._bridge_started()

    def finish(self, exit_code):
        self._finish(exit_code)

    def gpu_handover(self, reason):
        """Stops GPU tracing for a tool that needs CUPTI; True when it was on."""
        return self._gpu_handover(reason.encode(errors="replace")) == 1

    def store_path(self):
        return (self._store_path() or b"").decode(errors="replace")


def _load_abi():
    try:
        library = ctypes.CDLL(None)
        library.torchscope_is_active  # noqa: B018 - present only when the collector is preloaded
    except (OSError, AttributeError):
        path = os.environ.get("TORCHSCOPE_COLLECTOR_LIBRARY")
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
    saved = os.environ.pop("TORCHSCOPE_SAVED_PYTHONPATH", None)
    if saved is None:
        return
    if saved == _UNSET:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = saved


def _compiler_runtime():
    """torchscope_compiler.runtime: on the path under `torchscope fix`; under `torchscope run` (or LD_PRELOAD) it
    lies beside the bridge's folder (share/torchscope/compiler next to share/torchscope/python)."""
    try:
        from torchscope_compiler import runtime
    except ImportError:
        # Lexically: share/torchscope/python may be a link (the build tree's), whose `..` is elsewhere.
        beside = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "compiler")
        if not os.path.isdir(os.path.join(beside, "torchscope_compiler")):
            raise
        sys.path.append(beside)
        from torchscope_compiler import runtime
    return runtime


def _apply_runtime_fixes(abi):
    """Runs torchscope_compiler.runtime.apply(ids) for TORCHSCOPE_FIXES once the job has imported torch."""
    fix_ids = [fix.strip() for fix in os.environ.get("TORCHSCOPE_FIXES", "").split(",") if fix.strip()]
    if not fix_ids:
        return
    try:
        runtime = _compiler_runtime()
        runtime.apply(fix_ids)
        abi.record("attribute", {"key": "runtime_fixes", "value": ",".join(fix_ids)})
    except Exception as error:  # a broken fix must not stop the job
        abi.diagnostic("error", f"runtime fixes {','.join(fix_ids)} were not applied: {type(error).__name__}: {error}")


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
    from . import hooks

    # Runtime fixes patch torch, so they wait until the job imports it: a Python child that never
    # does (Inductor's `python -c` CPU-feature checks) would otherwise pay torch's import for them.
    try:
        hooks.install(abi, lambda: _apply_runtime_fixes(abi))
    except Exception as error:
        abi.diagnostic("error", f"the Python bridge could not install its hooks: {type(error).__name__}: {error}")
        _apply_runtime_fixes(abi)
    abi.bridge_started()
