# A job that never imports torch: prints a fixed text and exits with argv[1].
import sys

print("plain job output", flush=True)
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
