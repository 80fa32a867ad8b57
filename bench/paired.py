"""Paired runs for the overhead benchmarks (collector_overhead.py, sampler_overhead.py, capture_window.py).

Every repetition runs each variant once in a fresh process, back to back, the variants' order rotated by one each
repetition, so that drifts of the shared machine hit every side alike. A run's cost is the CPU time of its whole
process tree (getrusage of the waited children: every thread, the import of torch and the exit included); a figure
is summed up as its median and range over the repetitions, and a variant against the baseline as the ratios of the
runs of the same repetition.
"""

import json
import resource
import statistics
import subprocess


def interleaved(variants, repetitions, run):
    """{variant: [run(variant) for each repetition]}, the variants run in rotated order."""
    variants = list(variants)
    results = {variant: [] for variant in variants}
    for repetition in range(repetitions):
        shift = repetition % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            results[variant].append(run(variant))
    return results


def run_child(command, env):
    """Runs `command` to its end: its standard output and the CPU seconds (user + system) of its process tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def last_json(out):
    """The last line of `out` that holds a JSON object (what a worker printed last); {} when none does."""
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def spread(values):
    """(median, min, max) of the values."""
    values = list(values)
    return statistics.median(values), min(values), max(values)


def paired_ratios(runs, baseline, key):
    """run[key] / base[key] for the runs of each repetition."""
    return [run[key] / base[key] for run, base in zip(runs, baseline)]
