"""Runs a job with the runtime fixes of TORCHSCOPE_FIXES applied and writes a measurement report.

    python -m torchscope_compiler.launch --report OUT.json [--] script.py ARGS...
    python -m torchscope_compiler.launch --report OUT.json [--] -m package.module ARGS...

The report (JSON) is what `torchscope fix` reads when no collector store has steps:
  {"wall_s", "steps": [[start_s, end_s, compiled], ...], "compiles": [[start_s, end_s, "f/c"], ...],
   "compile_time_s", "recompiles", "graph_breaks", "applied_fixes", "exit_code"}
Times are seconds on time.perf_counter(). A step ends at every eager optimizer.step() (or at every
Tensor.backward() when those are more: a compiled optimizer step hides its hook); the first starts
when the script starts. `compiled` is 1 when a Dynamo compile overlapped the step.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
import time


class _Recorder:
    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.step_ends: list[float] = []
        self.backward_ends: list[float] = []
        self.compiles: list[list] = []
        self.open_compile: tuple[float, str] | None = None
        self.recompiles = 0

    def install(self) -> None:
        try:
            import torch
            import torch._dynamo.callback as dynamo_callback
            import torch.optim.optimizer as optimizer_module
        except Exception:  # no torch: the job runs and only the wall time is reported
            return
        self._is_compiling = torch.compiler.is_compiling
        optimizer_module.register_optimizer_step_post_hook(self._on_step)
        original_backward = torch.Tensor.backward
        backward_ends = self.backward_ends

        def backward(tensor, *args, **kwargs):
            result = original_backward(tensor, *args, **kwargs)
            backward_ends.append(time.perf_counter())
            return result

        torch.Tensor.backward = backward
        dynamo_callback.on_compile_start(self._on_compile_start)
        dynamo_callback.on_compile_end(self._on_compile_end)

    def _on_step(self, *_args) -> None:
        # Traced inside a compiled optimizer step, this is a constant no-op: no graph break.
        if not self._is_compiling():
            self.step_ends.append(time.perf_counter())

    def _on_compile_start(self, args) -> None:
        self.open_compile = (time.perf_counter(), str(getattr(args, "compile_id", "")))
        match = re.search(r"(\d+)/(\d+)", self.open_compile[1])
        if match and int(match.group(2)) > 0:
            self.recompiles += 1

    def _on_compile_end(self, _args) -> None:
        if self.open_compile is not None:
            begin, compile_id = self.open_compile
            self.compiles.append([begin - self.start, time.perf_counter() - self.start, compile_id])
            self.open_compile = None

    def report(self, exit_code: int, applied: list[str]) -> dict:
        graph_breaks = 0
        if "torch._dynamo" in sys.modules:
            counters = sys.modules["torch._dynamo"].utils.counters
            graph_breaks = int(sum(counters["graph_break"].values()))
        steps = []
        begin = 0.0
        # Optimizer steps inside compiled code are invisible to the hook; backward() marks them then.
        ends = self.step_ends if len(self.step_ends) >= len(self.backward_ends) else self.backward_ends
        for end_abs in ends:
            end = end_abs - self.start
            compiled = any(c[0] < end and c[1] > begin for c in self.compiles)
            steps.append([begin, end, int(compiled)])
            begin = end
        return {
            "wall_s": time.perf_counter() - self.start,
            "steps": steps,
            "compiles": self.compiles,
            "compile_time_s": sum(c[1] - c[0] for c in self.compiles),
            "recompiles": self.recompiles,
            "graph_breaks": graph_breaks,
            "applied_fixes": applied,
            "exit_code": exit_code,
        }


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "--report":
        print("usage: python -m torchscope_compiler.launch --report OUT.json [--] script.py ARGS...", file=sys.stderr)
        return 2
    report_path, rest = argv[1], argv[2:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        print("torchscope launch: no script given", file=sys.stderr)
        return 2

    from torchscope_compiler import runtime

    recorder = _Recorder()
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
        with open(report_path, "w", encoding="utf-8") as out:
            json.dump(recorder.report(exit_code, applied), out)
    return exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
