"""Models of a library (site-packages/tinylm) whose compile() is their own, compiled with `model.compile()` and
called on batches of growing sequence length: the user's `model.compile()` lines are the calls to change."""
import os
import sys

import torch

sys.path.append(os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "site-packages")))
import tinylm  # noqa: E402

BACKEND = os.environ.get("TORCHSCOPE_TEST_BACKEND", "eager")


def main():
    torch.manual_seed(0)
    forwarding = tinylm.TinyLM().eval()
    forwarding.compile(backend=BACKEND)  # MARK:compile-forwarding
    self_compiling = tinylm.SelfCompilingLM().eval()
    self_compiling.compile(backend=BACKEND)  # MARK:compile-self
    with torch.no_grad():
        for length in (6, 9, 12):
            ids = torch.randint(0, tinylm.VOCAB, (2, length))
            forwarding(ids)  # MARK:call-forwarding
            self_compiling(ids)  # MARK:call-self
    print("done")


if __name__ == "__main__":
    main()
