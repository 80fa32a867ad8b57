# 32 Python threads compile and run small functions and mark steps at the same time.
import sys
import threading
import types

import torch

import torchscope

THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 32
errors = []


def body(x, scale):
    y = x * scale + 1
    if y.sum() > 0:  # graph break: a data-dependent branch
        y = y - 1
    return y.relu()


def worker(index):
    try:
        # One compiled function per thread, Dynamo only: no Inductor compile per thread, which would
        # take minutes on a small machine. Each gets a code object of its own: Dynamo caches per code
        # object, and 32 threads sharing one would hit its recompile limit after 8.
        code = body.__code__.replace(co_name=f"body_{index}")
        fn = torch.compile(types.FunctionType(code, globals(), f"body_{index}", (index + 1,)), backend="eager")
        x = torch.randn(8)
        for _ in range(3):
            fn(x)
            torchscope.step()
        fn(torch.randn(16))  # a new shape: a recompile
    except Exception as error:  # noqa: BLE001 - reported below
        errors.append(repr(error))


threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("errors", len(errors), errors[:1], flush=True)
sys.exit(1 if errors else 0)
