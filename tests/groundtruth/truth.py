"""The jobs' own clock: their ground truth, measured by hand and never by torchscope.

With GROUNDTRUTH_OUT=FILE a job keeps the perf_counter_ns interval of each line it times (`span`), the instant each
training step ends (`step`), and writes them to FILE as JSON when it exits. Without it the same calls return at
once and nothing is written, so a job runs as it would for a user. perf_counter_ns is CLOCK_MONOTONIC on Linux, the
clock of torchscope's records.

What the timing costs falls between the timed lines, never inside one: `clock` is the builtin itself (no Python
frame), and a `span` call takes about 0.6 us on the 2-core VM, 5 us in a step of 6 to 16 ms.
"""
import atexit
import json
import os
import time

clock = time.perf_counter_ns

_out = os.environ.get("GROUNDTRUTH_OUT")
recording = bool(_out)  # a job does its by-hand comparisons (the eager calls of a compiled job) only when asked
_spans: dict[str, list[int]] = {}  # name -> start, end, start, end, ...
_steps: list[int] = []
_facts: dict = {}


def span(name: str, start: int) -> None:
    """One interval of the line(s) named `name`: from `start` (a `clock()` reading) to now."""
    if _out:
        _spans.setdefault(name, []).extend((start, clock()))


def step() -> None:
    """A training step ends here (right after the optimizer's step, where torchscope ends it too)."""
    if _out:
        _steps.append(clock())


def fact(**values) -> None:
    """What the job knows by construction (the graph breaks it was written with, its calls)."""
    _facts.update(values)


def _write() -> None:
    with open(_out, "w", encoding="utf-8") as out:
        json.dump({"spans": _spans, "steps": _steps, "facts": _facts}, out)


if _out:
    atexit.register(_write)
