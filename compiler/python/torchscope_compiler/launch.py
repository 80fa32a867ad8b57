"""Runs a job with the runtime fixes of TORCHSCOPE_FIXES applied and writes a measurement report.

    python -m torchscope_compiler.launch --report OUT.json [--stop-after-steps N] [--] script.py ARGS...
    python -m torchscope_compiler.launch --report OUT.json [--stop-after-steps N] [--] -m package.module ARGS...

With --stop-after-steps N the job ends cleanly after its N-th step: SystemExit(0) is raised as the
next step's backward() starts (the N-th iteration, its logging after optimizer.step() included, has
run whole; a job without backward() stops in the N-th optimizer step's post-hook), so the job's own `finally` blocks, context managers and atexit
handlers run and its output is flushed as on a normal exit. A job that never steps runs whole.
In a distributed job every rank runs this launcher and steps in lockstep, so all ranks stop at the
same step. OUT.json may contain "{rank}": the rank's RANK (0 without one); the rank's Python-level
stdout and stderr are then also copied to stdout.rank<r>.txt and stderr.rank<r>.txt beside it (the
launcher interleaves the ranks' output; these keep each rank's values for the parity check and its
errors for the report).

The report (JSON) is what `torchscope fix` reads beside the collector's store:
  {"wall_s", "steps": [[start_s, end_s, compiled, cpu_s], ...], "compiles": [[start_s, end_s, "f/c"], ...],
   "compile_time_s", "compile_cpu_s", "first_step": {"wall_s", "cpu_s"} | null, "recompiles", "graph_breaks",
   "executed_files", "cuda_used", "applied_fixes", "exit_code", "stopped_after_steps", "rank", "world_size",
   "requests": [[start_s, end_s, items], ...], "outputs": [{"leaves": [...]} | {"not_comparable": why}, ...]}
`requests` are the calls of the outermost module with parameters, `outputs` the first ones' outputs
(requests.py): an inference job's latency and output parity.
`stopped_after_steps` is N when the launcher ended the job there, else null.
Times are seconds on time.perf_counter() from the launcher's start. A step ends at every eager
optimizer.step() (or at every Tensor.backward() when those are more: a compiled optimizer step hides
its hook); the first starts when the script starts. `compiled` is 1 when a Dynamo compile overlapped
the step; `cpu_s` is the CPU time this process spent in the step (all its threads).
`compile_cpu_s` is the CPU time of the whole process tree (Inductor compiles in worker processes)
during Dynamo compiles; `first_step` is the time from the process's start (exec) to the end of its
first step, as wall time and as CPU time of the process tree. `executed_files` are the source files
(outside the Python installation) whose functions were seen running: on a stack sampled every 20 ms,
or when the job called torch.compile, built an optimizer, stepped it, called backward() or started
a compile. A sample that catches a module while it is imported does not count it: importing a file
defines its functions, it runs none of them.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
import sysconfig
import threading
import time

from torchscope_compiler.requests import RequestRecorder

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_SAMPLE_INTERVAL_S = 0.02


def _stat_fields(pid: int | str) -> list[str]:
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
        return stat.read().rsplit(")", 1)[1].split()  # fields from the 3rd (state) on


def _descendant_stats() -> list[list[str]]:
    """The /proc stat fields of every live descendant of this process (one pass over /proc)."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = _stat_fields(name)
        except OSError:
            continue  # gone meanwhile
        stats[int(name)] = fields
        children.setdefault(int(fields[1]), []).append(int(name))
    found = []
    pending = list(children.get(os.getpid(), []))
    while pending:
        pid = pending.pop()
        found.append(stats[pid])
        pending += children.get(pid, [])
    return found


def process_tree_cpu_s() -> float:
    """CPU seconds of this process, its reaped children and its live descendants (with theirs)."""
    own = os.times()
    total = time.process_time() + own.children_user + own.children_system
    for fields in _descendant_stats():
        total += sum(int(value) for value in fields[11:15]) / _CLOCK_TICKS  # utime stime cutime cstime
    return total


def _seconds_since_process_start() -> float:
    try:
        started = int(_stat_fields("self")[19]) / _CLOCK_TICKS
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def _own_cpu_s() -> float:
    return time.process_time()  # every thread of this process, at nanosecond resolution (os.times has 10 ms ticks)


class _ExecutedFiles:
    """Source files outside the Python installation whose code was seen running."""

    def __init__(self) -> None:
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(__file__)}
        for name in ("stdlib", "platstdlib", "purelib", "platlib"):
            path = sysconfig.get_paths().get(name)
            if path:
                prefixes.add(path)
        self._installed = tuple(os.path.realpath(prefix) + os.sep for prefix in prefixes)
        self._verdicts: dict[object, str | None] = {}  # code object -> file to record, or None
        self.files: set[str] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _file_of(self, frame, sampled: bool) -> str | None:
        code = frame.f_code
        if code in self._verdicts:
            verdict = self._verdicts[code]
        else:
            filename = code.co_filename
            verdict = None
            if not filename.startswith("<"):
                path = os.path.realpath(filename)
                if not path.startswith(self._installed):
                    verdict = path
            self._verdicts[code] = verdict
        if sampled and verdict is not None and code.co_name == "<module>" and frame.f_globals.get("__name__") != "__main__":
            return None  # a module caught while it is imported: defining its functions runs none of them
        return verdict

    def note_stack(self, frame, sampled: bool = False) -> None:
        while frame is not None:
            path = self._file_of(frame, sampled)
            if path is not None:
                self.files.add(path)
            frame = frame.f_back

    def note_caller(self) -> None:
        self.note_stack(sys._getframe(2))

    def _sample(self) -> None:
        me = threading.get_ident()
        while not self._stop.wait(_SAMPLE_INTERVAL_S):
            for thread, frame in sys._current_frames().items():
                if thread != me:
                    self.note_stack(frame, sampled=True)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._sample, name="torchscope-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        # Joined before the interpreter shuts down: a daemon thread woken during finalization is torn
        # down with a forced unwind, which aborts the process ("terminate called without an active exception").
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _StopAfterSteps(SystemExit):
    """Raised at the step boundary where --stop-after-steps ends the job (exit status 0)."""


class _Recorder:
    def __init__(self, stop_after_steps: int = 0) -> None:
        self.stop_after_steps = stop_after_steps  # 0: never
        self.stopped = False
        self.start = time.perf_counter()
        self.start_cpu = _own_cpu_s()
        self.start_offset = _seconds_since_process_start()
        self.step_ends: list[tuple[float, float]] = []  # (wall, own CPU)
        self.backward_ends: list[tuple[float, float]] = []
        self.first_ends: dict[str, tuple[float, float]] = {}  # "step"/"backward" -> (wall, tree CPU)
        self.compiles: list[list] = []
        self.open_compile: tuple[float, str, float] | None = None
        self.compile_cpu_s = 0.0
        self.recompiles = 0
        self.executed = _ExecutedFiles()
        self.requests = RequestRecorder(self.start)

    def install(self) -> None:
        self.executed.start()
        try:
            import torch
            import torch._dynamo.callback as dynamo_callback
            import torch.optim.optimizer as optimizer_module
        except Exception:  # no torch: the job runs and only the wall time is reported
            return
        from torchscope_compiler.runtime import traced_check

        self._traced = traced_check()
        self.requests.install(torch, self._traced)
        optimizer_module.register_optimizer_step_post_hook(self._on_step)
        original_backward = torch.Tensor.backward
        recorder = self

        def backward(tensor, *args, **kwargs):
            recorder._stop_before_backward()
            result = original_backward(tensor, *args, **kwargs)
            recorder._mark("backward", recorder.backward_ends)
            return result

        torch.Tensor.backward = backward
        self._note_calls_of(torch, "compile")
        self._note_calls_of(torch.optim.Optimizer, "__init__")
        dynamo_callback.on_compile_start(self._on_compile_start)
        dynamo_callback.on_compile_end(self._on_compile_end)

    def _note_calls_of(self, owner, name: str) -> None:
        original = getattr(owner, name)
        executed = self.executed

        def noting(*args, **kwargs):
            executed.note_caller()
            return original(*args, **kwargs)

        noting.__wrapped__ = original
        noting.__doc__ = original.__doc__
        noting.__name__ = getattr(original, "__name__", name)
        setattr(owner, name, noting)

    def _mark(self, kind: str, ends: list[tuple[float, float]]) -> None:
        ends.append((time.perf_counter(), _own_cpu_s()))
        if kind not in self.first_ends:
            self.first_ends[kind] = (ends[-1][0], process_tree_cpu_s())
        self.executed.note_caller()

    def _on_step(self, *_args) -> None:
        # Traced inside a compiled optimizer step, this is a constant no-op: no graph break.
        if not self._traced():
            self._mark("step", self.step_ends)
            if self.stop_after_steps and not self.backward_ends and len(self.step_ends) >= self.stop_after_steps:
                self._stop()  # a job without backward(): its N-th step ends here

    def _stop_before_backward(self) -> None:
        # The N-th step ends where the (N+1)-th begins: stopping as its backward() starts lets the N-th
        # iteration finish whole (the job's logging after optimizer.step() included).
        steps = max(len(self.step_ends), len(self.backward_ends))
        if self.stop_after_steps and steps >= self.stop_after_steps and not self._traced():
            self._stop()

    def _stop(self) -> None:
        self.stopped = True
        sys.stdout.flush()
        raise _StopAfterSteps(0)

    def _on_compile_start(self, args) -> None:
        compile_id = str(getattr(args, "compile_id", ""))
        self.open_compile = (time.perf_counter(), compile_id, process_tree_cpu_s())
        match = re.search(r"(\d+)/(\d+)", compile_id)
        if match and int(match.group(2)) > 0:
            self.recompiles += 1
        self.executed.note_stack(sys._getframe(1))

    def _on_compile_end(self, _args) -> None:
        if self.open_compile is not None:
            begin, compile_id, cpu = self.open_compile
            self.compiles.append([begin - self.start, time.perf_counter() - self.start, compile_id])
            self.compile_cpu_s += process_tree_cpu_s() - cpu
            self.open_compile = None

    def report(self, exit_code: int, applied: list[str]) -> dict:
        self.executed.stop()
        graph_breaks = 0
        if "torch._dynamo" in sys.modules:
            counters = sys.modules["torch._dynamo"].utils.counters
            graph_breaks = int(sum(counters["graph_break"].values()))
        torch = sys.modules.get("torch")
        cuda_used = bool(torch is not None and torch.cuda.is_initialized())
        # Optimizer steps inside compiled code are invisible to the hook; backward() marks them then.
        use_steps = len(self.step_ends) >= len(self.backward_ends)
        ends = self.step_ends if use_steps else self.backward_ends
        steps = []
        begin, begin_cpu = 0.0, self.start_cpu
        for end_abs, end_cpu in ends:
            end = end_abs - self.start
            compiled = any(c[0] < end and c[1] > begin for c in self.compiles)
            steps.append([begin, end, int(compiled), end_cpu - begin_cpu])
            begin, begin_cpu = end, end_cpu
        first = self.first_ends.get("step" if use_steps else "backward")
        first_step = None
        if first is not None:
            first_step = {"wall_s": self.start_offset + first[0] - self.start, "cpu_s": first[1]}
        return {
            "wall_s": time.perf_counter() - self.start,
            "steps": steps,
            "compiles": self.compiles,
            "compile_time_s": sum(c[1] - c[0] for c in self.compiles),
            "compile_cpu_s": self.compile_cpu_s,
            "first_step": first_step,
            "recompiles": self.recompiles,
            "graph_breaks": graph_breaks,
            "executed_files": sorted(self.executed.files),
            "cuda_used": cuda_used,
            "applied_fixes": applied,
            "exit_code": exit_code,
            "stopped_after_steps": self.stop_after_steps if self.stopped else None,
            "rank": _rank(),
            "world_size": int(os.environ.get("WORLD_SIZE", "1") or 1),
            **self.requests.report(),
            "not_applicable": dict(sys.modules["torchscope_compiler.runtime"].not_applicable)
            if "torchscope_compiler.runtime" in sys.modules else {},
        }


class _Tee:
    """Writes to a stream and to a file; everything else is the stream's."""

    def __init__(self, stream, path: str) -> None:
        self._stream = stream
        self._copy = open(path, "w", encoding="utf-8", errors="replace")

    def write(self, text: str) -> int:
        try:
            self._copy.write(text)
        except (OSError, ValueError):
            pass  # the copy must never break the job's own output
        return self._stream.write(text)

    def flush(self) -> None:
        try:
            self._copy.flush()
        except (OSError, ValueError):
            pass
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _tee_rank_output(report_path: str) -> None:
    folder = os.path.dirname(os.path.abspath(report_path))
    rank = _rank()
    try:
        sys.stdout = _Tee(sys.stdout, os.path.join(folder, f"stdout.rank{rank}.txt"))
        sys.stderr = _Tee(sys.stderr, os.path.join(folder, f"stderr.rank{rank}.txt"))
    except OSError:
        pass


def _rank() -> int:
    try:
        return int(os.environ.get("RANK", "0") or 0)
    except ValueError:
        return 0


def main(argv: list[str]) -> int:
    usage = "usage: python -m torchscope_compiler.launch --report OUT.json [--stop-after-steps N] [--] script.py ARGS..."
    if len(argv) < 2 or argv[0] != "--report":
        print(usage, file=sys.stderr)
        return 2
    report_path, rest = argv[1].replace("{rank}", str(_rank())), argv[2:]
    if "{rank}" in argv[1]:
        _tee_rank_output(report_path)
    stop_after_steps = 0
    if rest and rest[0] == "--stop-after-steps":
        try:
            stop_after_steps = int(rest[1])
        except (IndexError, ValueError):
            print(usage, file=sys.stderr)
            return 2
        rest = rest[2:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        print("torchscope launch: no script given", file=sys.stderr)
        return 2

    from torchscope_compiler import runtime

    recorder = _Recorder(stop_after_steps)
    recorder.install()
    applied = runtime.apply_from_environment()

    exit_code = 0
    try:
        if rest[0] == "-m" and len(rest) >= 2:
            sys.argv = [rest[1]] + rest[2:]
            runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(rest)
            sys.path.insert(0, os.path.dirname(os.path.abspath(rest[0])))
            runpy.run_path(rest[0], run_name="__main__")
    except SystemExit as stop:
        code = stop.code
        exit_code = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        exit_code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        with open(report_path, "w", encoding="utf-8") as out:
            json.dump(recorder.report(exit_code, applied), out)
    return exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
