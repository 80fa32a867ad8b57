# No torch: a 20 ms step marked with torchscope.step() until the collector's time window has opened and closed
# again (torchscope_window_open), at most 60 s.
import ctypes
import time

import torchscope

window_open = ctypes.CDLL(None).torchscope_window_open
seen_open = False
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    time.sleep(0.02)
    torchscope.step()
    seen_open = seen_open or window_open() == 1
    if seen_open and window_open() == 0:
        break
print("done", flush=True)
