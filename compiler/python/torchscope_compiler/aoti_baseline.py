"""The baseline of `torchscope optimize` on an exported program: the program run eagerly (ExportedProgram.module()
under no_grad), in a worker that torchscope-optimize drives round by round so that it is interleaved with the
compiled variants.

`python -m torchscope_compiler.aoti_baseline PROGRAM` prints `ready`, then answers the requests of eager_worker.
"""

import sys

from torchscope_compiler.aoti_program import load_program
from torchscope_compiler.eager_worker import serve


def main(program_path):
    import torch

    module = load_program(program_path).module()
    print("ready", flush=True)
    serve(torch, module)


if __name__ == "__main__":
    main(sys.argv[1])
