"""The requests an eager worker of `torchscope optimize` answers, so that torchscope-optimize can time it round by
round, interleaved with the compiled variants: aoti_baseline (the exported program) and aoti_capture (the job's own
module, once the job has ended) speak it.

One request per line on standard input, one answer line each:
    inputs PATH THREADS   load the seeded inputs (a torch.save'd list) and set the intra-op threads -> ok
    outputs STEM          one call; its tensors in float32 as STEM.json/STEM.bin (aoti_program.write_raw) -> ok
    time N                N calls under no_grad -> their wall times in milliseconds
    quit                  (or the end of the input) stops the worker
A request that fails is answered `error TEXT`.
"""

import sys
import time

from torchscope_compiler.aoti_program import first_line, flat_outputs, write_raw


def serve(torch, call, devices=(), commands=sys.stdin, answers=sys.stdout):
    """Answers requests until `quit`; `devices`: where each input goes (the job's own inputs' devices)."""
    devices, inputs = list(devices), []
    synchronize = lambda: None  # noqa: E731
    for line in commands:
        request, _, argument = line.rstrip("\n").partition(" ")  # a path may hold spaces
        if request in ("", "quit"):
            break
        try:
            if request == "inputs":
                path, threads = argument.rsplit(" ", 1)
                inputs = [t.to(devices[i]) if i < len(devices) else t for i, t in enumerate(torch.load(path))]
                if int(threads) > 0:
                    torch.set_num_threads(int(threads))
                if any(t.is_cuda for t in inputs):  # wall time of a call: the GPU's work included
                    synchronize = torch.cuda.synchronize
                answer = "ok"
            elif request == "outputs":
                with torch.no_grad():
                    outputs = flat_outputs(call(*inputs))
                write_raw([t.detach().float().cpu() for t in outputs], argument)
                answer = "ok"
            elif request == "time":
                times = []
                with torch.no_grad():
                    for _ in range(int(argument)):
                        started = time.perf_counter()
                        call(*inputs)
                        synchronize()
                        times.append((time.perf_counter() - started) * 1e3)
                answer = " ".join(f"{t:.6f}" for t in times)
            else:
                answer = f"error unknown request '{request}'"
        except Exception as error:  # the worker's answer names it; torchscope-optimize decides what it means
            answer = f"error {type(error).__name__}: {first_line(error)}"
        print(answer, file=answers, flush=True)
