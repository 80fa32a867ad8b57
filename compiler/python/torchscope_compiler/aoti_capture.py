"""`torchscope optimize --export`: runs the user's job, takes the outermost module it calls and that call's first
inputs, exports it with torch.export (strict=False) once the job ends, and then stays as the eager worker of the
job's own module, so that torchscope-optimize times what the job runs today beside the compiled variants.

    python -m torchscope_compiler.aoti_capture PROGRAM.pt2 INFO.json [--] script.py ARGS...
    python -m torchscope_compiler.aoti_capture PROGRAM.pt2 INFO.json [--] -m package.module ARGS...

The outermost module is the first nn.Module called while no other module call is running; every later outermost call
of that module gives a batch size (the first dimension of its first tensor input), and the batch dimension is exported
dynamic when those differ. INFO.json: {"ok", "module", "defined_at", "called_at", "calls", "batch_sizes",
"dynamic_batch", "inputs", "reason"}. PROGRAM.pt2 is written under a temporary name and renamed: it exists only whole.
Once it is, the worker prints `ready` and answers eager_worker's requests with the module as the job left it; after a
failure it exits 1 with the reason in INFO.json. Standard input and output are the worker's: the job reads the
descriptor TORCHSCOPE_JOB_STDIN names (torchscope's own standard input; /dev/null without it), and its output
(Python's and native code's alike) goes to standard error.
"""

import inspect
import json
import os
import runpy
import sys
import traceback

from torchscope_compiler.aoti_program import first_line
from torchscope_compiler.eager_worker import serve
from torchscope_compiler.runtime import DynamoSkip, traced_check


class Capture:
    def __init__(self):
        self.module = None
        self.args = None
        self.kwargs = None
        self.called_at = ""
        self.calls = 0
        self.batch_sizes = []
        self.depth = 0
        self.original_call = None

    def install(self, torch):
        original = self.original_call = torch.nn.Module.__call__
        capture = self
        traced = traced_check()

        def call(module, *args, **kwargs):
            if traced():  # a module called inside compiled code: not the job's call of its model
                return original(module, *args, **kwargs)
            if not skip.done:
                skip()
            if capture.depth == 0 and (capture.module is None or module is capture.module):
                capture.record(torch, module, args, kwargs, sys._getframe(1))
            capture.depth += 1
            try:
                return original(module, *args, **kwargs)
            finally:
                capture.depth -= 1

        skip = DynamoSkip(call)
        torch.nn.Module.__call__ = call

    def uninstall(self, torch):
        torch.nn.Module.__call__ = self.original_call

    def record(self, torch, module, args, kwargs, caller):
        tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        if tensors and tensors[0].dim() > 0:
            self.batch_sizes.append(int(tensors[0].shape[0]))
        self.calls += 1
        if self.module is not None:
            return
        self.module = module
        with torch.inference_mode(False), torch.no_grad():
            copy = lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v  # noqa: E731
            self.args = tuple(copy(a) for a in args)
            self.kwargs = {k: copy(v) for k, v in kwargs.items()}
        self.called_at = f"{caller.f_code.co_filename}:{caller.f_lineno}"


def defined_at(module):
    """FILE:LINE of the module's forward, under its decorators (a script's own classes live in a __main__ that
    inspect.getsourcefile cannot read, so the code object is asked)."""
    forward = getattr(type(module), "forward", None)
    code = getattr(inspect.unwrap(forward) if forward is not None else None, "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    return type(module).__module__


def user_frame(error):
    """The last frame of the error's traceback in the user's code (outside torch and the Python installation)."""
    found = ""
    for frame in traceback.extract_tb(error.__traceback__):
        if "site-packages" not in frame.filename and "/lib/python" not in frame.filename and "torchscope" not in frame.filename:
            found = f"{frame.filename}:{frame.lineno}"
    return found


class Positional:
    """The captured call as a module of positional tensors (keyword inputs after the positional ones) returning a
    tuple of tensors, so that the program takes and gives flat lists of tensors, as the compiled packages and the
    measurements do, and loads without the job's output classes (a library's ModelOutput, say)."""

    def __new__(cls, torch, module, args, kwargs):
        names = list(kwargs)

        class Call(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.module = module

            def forward(self, *flat):
                out = self.module(*flat[:len(args)], **dict(zip(names, flat[len(args):])))
                return tuple(t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor))

        return Call()


def export(capture, module, program_path):
    import torch

    args = tuple(capture.args) + tuple(capture.kwargs.values())
    if not all(isinstance(a, torch.Tensor) for a in args):
        raise TypeError("the module's inputs are not all tensors: optimize measures modules of tensor inputs")
    dynamic = len(set(capture.batch_sizes)) > 1
    shapes = None
    if dynamic:
        batch = args[0].shape[0]
        shapes = tuple({0: torch.export.Dim.DYNAMIC} if a.dim() > 0 and a.shape[0] == batch else None for a in args)
        shapes = (shapes,)  # the wrapper's *flat is one argument
    program = torch.export.export(module, args, dynamic_shapes=shapes, strict=False)
    partial = f"{program_path}.partial-{os.getpid()}.pt2"
    try:
        torch.export.save(program, partial)
        os.replace(partial, program_path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return dynamic


def run_job(job):
    sys.argv = list(job)
    if job[0] == "-m":
        sys.argv = job[1:]
        runpy.run_module(job[1], run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(job[0])))
        runpy.run_path(job[0], run_name="__main__")


def main(program_path, info_path, job):
    try:
        import torch
    except ImportError as error:
        with open(info_path, "w") as out:
            json.dump({"ok": False, "reason": f"{sys.executable} cannot import torch ({error}): start the job with "
                                              "the Python that has its torch"}, out)
        return 1

    # The worker's requests and answers keep descriptors of their own: the job reads the standard input it was lent
    # (torchscope's), and its output on descriptor 1 (print, native code's printf) goes to standard error.
    requests, answers = os.fdopen(os.dup(0)), os.fdopen(os.dup(1), "w")
    lent = os.environ.pop("TORCHSCOPE_JOB_STDIN", "")
    job_stdin = int(lent) if lent.isdigit() else os.open(os.devnull, os.O_RDONLY)
    os.dup2(job_stdin, 0)
    os.close(job_stdin)
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr  # and Python's prints keep their order with the job's warnings
    capture = Capture()
    capture.install(torch)
    info = {"ok": False}
    try:
        run_job(job)
    except SystemExit as stop:
        if stop.code not in (None, 0):
            info["reason"] = f"the job exited with {stop.code} before optimize could export its module"
    except BaseException as error:  # the job's own failure: told with its line, nothing exported
        info["reason"] = f"the job failed at {user_frame(error) or 'its start'}: {type(error).__name__}: {first_line(error)}"
    finally:
        capture.uninstall(torch)
    if "reason" not in info and capture.module is None:
        # torch.fx keeps nn.Module.__call__ as it was at import: modules that make_fx, symbolic_trace or
        # torch.export call while tracing pass by the capture, and their tracing inputs are not the job's anyway.
        info["reason"] = ("the job called no torch.nn.Module itself (calls made while torch's tracers run, make_fx, "
                          "torch.fx or torch.export, are not counted): call the model once on its inputs, or save "
                          "its torch.export program and give optimize that .pt2")
    if "reason" not in info:
        name = type(capture.module).__name__
        info.update(module=name, defined_at=defined_at(capture.module), called_at=capture.called_at,
                    calls=capture.calls, batch_sizes=sorted(set(capture.batch_sizes)),
                    inputs=[list(a.shape) for a in list(capture.args) + list(capture.kwargs.values())
                            if isinstance(a, torch.Tensor)])
        module = Positional(torch, capture.module, capture.args, capture.kwargs)
        try:
            info["dynamic_batch"] = export(capture, module, program_path)
            info["ok"] = True
        except Exception as error:
            where = user_frame(error)
            info["reason"] = (f"torch.export cannot export {name} ({info['defined_at']}), called at "
                              f"{capture.called_at}: {type(error).__name__}: {first_line(error)}"
                              + (f" (at {where})" if where else ""))
    with open(info_path, "w") as out:
        json.dump(info, out)
    if not info["ok"]:
        return 1
    print("ready", file=answers, flush=True)
    devices = [a.device for a in list(capture.args) + list(capture.kwargs.values())]
    serve(torch, module, devices, requests, answers)
    return 0


if __name__ == "__main__":
    words = sys.argv[1:]
    job = words[2:]
    if job and job[0] == "--":
        job = job[1:]
    sys.exit(main(words[0], words[1], job))
