"""Replays a recorded TORCH_TRACE log into torch's structured-trace logger of this interpreter.

    LD_PRELOAD=libtorchscope_collector.so TORCHSCOPE_OUTPUT=RUN.db python replay_trace.py LOG RECORDED_TORCH_DIR

Run under the collector, the bridge hooks into this interpreter's torch at `import torch` as in a real
job, and then receives every event of LOG exactly as torch emits it: `trace_log.debug("", extra=
{"metadata": ..., "payload": ...})`. Paths into the recording's torch are moved to this torch, so
that the bridge tells torch's frames from the user's as it would have there.
"""

import os
import sys

import tracelog


def main(log, recorded_torch_dir):
    import torch
    from torch._logging import _internal

    local_torch_dir = os.path.dirname(torch.__file__)
    for event in tracelog.read(log):
        payload = event.payload
        if payload is not None:
            payload = payload.replace(recorded_torch_dir + os.sep, local_torch_dir + os.sep)
        _internal.trace_log.debug("", extra={"metadata": event.handler_metadata(), "payload": payload})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
