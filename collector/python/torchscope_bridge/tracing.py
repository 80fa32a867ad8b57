"""Whether the calling thread's code is being traced by torch.compile or torch.export.

The hooks must do nothing in code that Dynamo traces (they would break the graph or record a
step that never ran), but everything on a thread that merely runs while another one compiles.
torch.compiler.is_compiling() cannot tell the two apart: from torch 2.13 it reads a module-wide
flag that Dynamo holds for a whole compile, so a step or collective on one thread was dropped
while any other thread compiled. Dynamo folds is_dynamo_compiling() to True in what it traces
(asked first, nothing else is traced); a compile or export on this very thread keeps its
TracingContext in torch's thread-local state.
"""


def not_traced():
    return False


def checker(torch):
    """A function that is True while the calling thread's code is being traced."""
    dynamo, context = getattr(torch.compiler, "is_dynamo_compiling", None), getattr(torch._guards, "TracingContext", None)
    if dynamo is None or context is None:
        return torch.compiler.is_compiling
    return lambda: dynamo() or context.try_get() is not None


def dynamo_checker(torch):
    """A cheaper check for wrappers of compiled code, which only Dynamo can trace (an outer compiled region
    calling an inner one): True while Dynamo traces the calling code. TracingContext.try_get costs about
    ten times more and matters only for hooks that torch's own tracing (AOTAutograd, export) may run."""
    return getattr(torch.compiler, "is_dynamo_compiling", None) or checker(torch)
