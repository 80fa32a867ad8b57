"""Runs leaky_job.main under torch.profiler with profile_memory=True (and with_stack=True, so that it can name
lines) and prints, as JSON, what a user reading `key_averages(group_by_stack_n=...)` sorted by
self_cpu_memory_usage would look at first: the top op, and the job's line of the first entry that has one (backward
ops run on autograd's thread and have no Python stack).

    python profile_with_torch_profiler.py STEPS
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import leaky_job  # noqa: E402


def main(steps):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True,
                                with_stack=True) as profiler:
        leaky_job.main(steps)
    job_file = os.path.abspath(leaky_job.__file__)
    averages = sorted(profiler.key_averages(group_by_stack_n=8), key=lambda event: -event.self_cpu_memory_usage)
    line = None
    for event in averages:
        for frame in event.stack:  # "file(line): function", innermost first
            path, _, rest = frame.partition("(")
            if os.path.abspath(path) == job_file:
                line = int(rest.split(")")[0])
                break
        if line is not None:
            break
    print("bench-named " + json.dumps({"op": averages[0].key, "line": line,
                                       "self_cpu_memory_bytes": averages[0].self_cpu_memory_usage}))


if __name__ == "__main__":
    main(int(sys.argv[1]))
