"""Host-device syncs on known lines, for checking that the collector attributes each blocking
CUDA call to the Python line that caused it. check_syncs.py reads the `expect-sync` markers.
Exit codes: 0 done, 77 no CUDA device."""
import argparse
import sys

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("sync_lines: no CUDA device", file=sys.stderr)
        return 77
    x = torch.randn(2048, 2048, device="cuda")
    side = torch.cuda.Stream()
    total = 0.0
    for _ in range(args.iterations):
        y = x @ x
        total += y.sum().item()  # expect-sync: stream
        y = x @ y
        torch.cuda.synchronize()  # expect-sync: device
        host = y.cpu()  # expect-sync: stream
        done = torch.cuda.Event()
        done.record()
        done.synchronize()  # expect-sync: event
        with torch.cuda.stream(side):
            z = x @ x
        side.synchronize()  # expect-sync: stream
        total += float(host[0, 0]) + float(z[0, 0].item())  # expect-sync: stream
    print(f"sync_lines: done ({total:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
