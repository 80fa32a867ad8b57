# No torch needed: explicit step markers, then a pause long enough for a signal to arrive.
import sys
import time

import torchscope

for _ in range(4):
    time.sleep(0.01)
    torchscope.step()
if len(sys.argv) > 1 and sys.argv[1] == "wait":
    print("waiting", flush=True)
    time.sleep(30)
