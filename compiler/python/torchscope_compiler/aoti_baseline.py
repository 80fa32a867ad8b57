"""The baseline of `torchscope optimize` on an exported program: the program run eagerly (ExportedProgram.module()
under no_grad), in a worker that torchscope-optimize drives round by round so that it is interleaved with the
compiled variants.

`python -m torchscope_compiler.aoti_baseline PROGRAM INPUTS THREADS` prints `ready`, then answers each line
`time N` with N per-call wall times in milliseconds on one line; `quit` or the end of its input stops it.
"""

import sys
import time

from torchscope_compiler.aoti_program import load_program


def main(program_path, inputs_path, threads):
    import torch

    if threads > 0:
        torch.set_num_threads(threads)
    module = load_program(program_path).module()
    inputs = torch.load(inputs_path)
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        times = []
        with torch.no_grad():
            for _ in range(int(words[1])):
                started = time.perf_counter()
                module(*inputs)
                times.append((time.perf_counter() - started) * 1e3)
        print(" ".join(f"{t:.6f}" for t in times), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
