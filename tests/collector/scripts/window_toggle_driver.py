# Runs `torchscope run --signal-toggle -o STORE -- python window_toggle_job.py [--own-handler]` and sends SIGUSR2
# to torchscope (which passes it on to the job) after the job's first and second phases.
import os
import signal
import subprocess
import sys

torchscope, store, job = sys.argv[1:4]
command = [torchscope, "run", "--signal-toggle", "-o", store, "--", sys.executable, job, *sys.argv[4:]]
process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
for line in process.stdout:
    sys.stdout.write(line)
    if line.startswith("phase 0") or line.startswith("phase 1"):
        os.kill(process.pid, signal.SIGUSR2)
        process.stdin.write("go\n")
        process.stdin.flush()
sys.exit(process.wait())
