"""The recorded structured traces of scripts/torch_versions/job.py, one pair (cold, warm) per torch release.

tests/interop/data/torch_versions/manifest.json says, per release, where its torch and the job were
when it was recorded and which job lines carry which `# expect:` marker; record.py writes it.
"""

import json
import os
import re
from pathlib import Path

import tracelog

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "interop" / "data" / "torch_versions"

# What each recompile marker of job.py makes torch write into a failing guard.
RECOMPILE_EVIDENCE = {
    "recompile-shape": re.compile(r"size mismatch|size\(\)"),
    "recompile-lr": re.compile(r"\['lr'\]"),
    "recompile-grad-mode": re.compile(r"grad_mode"),
    "recompile-training": re.compile(r"\.training\b"),
    "recompile-float": re.compile(r"\bscale\b"),
    "recompile-dtype": re.compile(r"dtype"),
}

# Checks that the bridge does not pass yet with some releases ("2.5.1") or runs ("2.5.1 warm"), each
# with what torch writes there and where the bridge goes wrong (docs/collector.md, "torch releases").
# Such a check must fail where it is listed, so that an entry goes as soon as the bridge handles it.
KNOWN_GAPS = {
    "graph-breaks-found": {
        "2.5.1": "torch 2.5 writes no dynamo_graph_break_reason artifact: a break that restarts the compile is only "
                 "a compilation_metrics restart_reasons entry (no line; the resume function's name "
                 "torch_dynamo_resume_in_<function>_at_<line> has it), a data-dependent branch not even that; "
                 "TraceHandler reads only the artifact, so no graph break is stored",
    },
    "fx-cache": {
        "2.5.1 warm": "torch 2.5 reports an FX graph cache lookup as the artifact fx_graph_cache_hash with "
                      "cache_state (hit, miss, bypass) in its JSON payload; TraceHandler takes every "
                      "fx_graph_cache_* name that does not end in _hit for a miss, so the hits are stored as misses",
    },
    "break-user-line": {
        "2.6.0": "the optimizer's own break (torch._dynamo.graph_break() in optimizer.py _use_grad) happens in a frame "
                 "that Dynamo entered inside torch (the step wrapper); torch 2.6 lists only that frame's stack, all "
                 "torch frames, under 'User code traceback:', so parse.graph_break finds no user line; the user's "
                 "frame is only in that compile's dynamo_start stack",
    },
}


def check(testcase, recording, gap, assertions):
    """Runs `assertions`; for a release or run listed under KNOWN_GAPS[gap] they must fail instead."""
    gaps = KNOWN_GAPS.get(gap, {})
    diagnosis = gaps.get(f"{recording.version} {recording.run}", gaps.get(recording.version))
    if diagnosis is None:
        assertions()
        return
    try:
        assertions()
    except AssertionError:
        return
    testcase.fail(f"{recording}: the known gap '{gap}' ({diagnosis}) is gone: remove it from KNOWN_GAPS")


class Recording:
    """One run of the job under one torch release."""

    def __init__(self, version, run, entry):
        self.version, self.run = version, run
        self.torch_dir = entry["torch_dir"]
        self.job = entry["job"]
        self.markers = {int(line): kind for line, kind in entry["markers"].items()}
        self.log = DATA / entry["runs"][run]["log"]
        self._events = None

    def __str__(self):
        return f"torch {self.version} {self.run}"

    @property
    def events(self):
        if self._events is None:
            self._events = tracelog.read(self.log)
        return self._events

    def of_kind(self, kind):
        return [event for event in self.events if event.kind == kind]

    @property
    def prefixes(self):
        """torch's directory at recording time, as the bridge's `internal_prefixes` gives it."""
        return (self.torch_dir + os.sep,)

    def marked_lines(self, prefix):
        return {line for line, kind in self.markers.items() if kind.startswith(prefix)}

    def marker_kinds(self, prefix):
        return {kind for kind in self.markers.values() if kind.startswith(prefix)}

    def fx_cache_states(self):
        return tracelog.fx_cache_states(self.events)

    def reported_graph_breaks(self):
        """How many graph breaks torch reported: break artifacts, else (torch 2.5) restart reasons."""
        return len(self.of_kind("artifact:dynamo_graph_break_reason")) or len(tracelog.restart_reasons(self.events))


def recordings():
    manifest = json.loads((DATA / "manifest.json").read_text())
    return [Recording(version, run, entry) for version, entry in manifest.items() for run in entry["runs"]]

