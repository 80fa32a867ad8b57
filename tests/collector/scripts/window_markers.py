# No torch: a 20 ms step marked with torchscope.step() until the collector's time window has opened and closed
# again (torchscope_window_open), at most 60 s. Prints how many markers it made before it saw the window open.
import ctypes
import time

import torchscope

window_open = ctypes.CDLL(None).torchscope_window_open
seen_open = False
markers_before_open = 0
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    time.sleep(0.02)
    torchscope.step()
    seen_open = seen_open or window_open() == 1
    if not seen_open:
        markers_before_open += 1
    if seen_open and window_open() == 0:
        break
print(f"done before={markers_before_open}", flush=True)
