"""A job for the live status line: one compilation and three steps recorded through the collector's C ABI (no
torch needed), slowly enough for `torchscope run` to show them while it runs."""

import ctypes
import json
import sys
import time

collector = ctypes.CDLL(None)  # the preloaded libtorchscope_collector.so
collector.torchscope_record_json.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
collector.torchscope_record_step.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_char_p]

start = time.monotonic_ns()  # the store's clock (CLOCK_MONOTONIC)
time.sleep(0.3)
compile_event = {"frame_id": 0, "frame_compile_id": 0, "co_name": "forward", "co_filename": __file__,
                 "co_firstlineno": 1, "start_ns": start, "end_ns": time.monotonic_ns()}
if collector.torchscope_record_json(b"compiles", json.dumps(compile_event).encode()) != 0:
    sys.exit("the collector is not recording")
for index in range(3):
    began = time.monotonic_ns()
    time.sleep(0.4)
    collector.torchscope_record_step(index, began, time.monotonic_ns(), b"marker")
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 1.5)
print("job done")
