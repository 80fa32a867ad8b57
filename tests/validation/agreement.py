"""Matches torchscope's view of a run against torch's own log of it and scores the agreement.

Units (docs/validation.md, "Third-party models"):
- a break unit is a user-attributed break site (file:line) with a cause class. The site is where torch says the
  graph broke; when that is inside torch itself (torch.optim's `_use_grad`, torch.utils.hooks), it is the
  innermost frame of torch's user traceback outside torch and the standard library: the line that called in.
  The class comes from torch's graph-break type (`gb_type`). torch logs a break once per frame compilation; all
  entries count. A finding about it may name the site or the innermost line of the job's own file on that
  traceback.
- a recompile unit is a recompiled frame (the code object's file:first line) with a cause class, read from the
  guard failures torch printed. A finding about it may name the frame or the innermost line of the job's own file
  on the stack that called it (from torch's structured trace of the same run).
A unit is *located* when a finding of its family names one of its locations, and *found* when one of those
findings has a rule its class maps to. Recall = found / units; class agreement = found / located. A finding is
*supported* when some unit at its location maps to its rule; precision = supported / findings. A finding has a
user-code location when its file is outside torch's installation and Python's standard library (torch's own
notion of user code, which includes libraries such as transformers); in the job's file is reported beside it.
"""
from __future__ import annotations

import dataclasses
import os
import re
import sysconfig
from collections import Counter, defaultdict

from torch_logs import Frame, GraphBreak, Recompile, TorchLog
from torchscope_side import Finding, TorchscopeView

# torch's graph-break types (torch/_dynamo/graph_break_registry.json) by cause class; any other type is "other".
_BREAK_CLASSES = {
    "data-dependent-branch": ("Data-dependent branching", "Data-dependent branching with non-constant __bool__",
                              "Data-dependent assertion failed (cannot compile partial graph)"),
    "item": ("Unsupported Tensor.item() call with capture_scalar_outputs=False", "Data dependent operator",
             "Tensor.tolist() with non-integer tensor"),
    "dynamic-output-shape": ("Dynamic shape operator", "Dynamic shape operator (no meta kernel)",
                             "Attempted to use `torch.nn.functional.one_hot` with data-dependent output shape"),
    "print": ("logging.Logger method not supported for non-export cases",),
    "unsupported-call": ("Attempted to call function marked as skipped", "Attempted to inline function marked as skipped",
                         "Attempted to inline function marked as skipped (SkipFunctionVariable)",
                         "Failed to trace builtin operator", "Unsupported context manager",
                         "Unsupported Tensor.backward() call", "Unsupported method call", "Unsupported function call",
                         "Unsupported function call (delayed)", "Unsupported key type for nn.Module.__getitem__",
                         "Invalid or non-const argument in nn.Module __getitem__", "setattr() on unsupported type",
                         "unimplemented builtin op on tensor arguments"),
    "explicit": ("Call to `torch._dynamo.graph_break()`",),
}
_PRINT_EXPLANATION = re.compile(r"builtin operator `print`")

# The rules a class may be reported under. A class without a rule of its own belongs to the family's "other".
EXPECTED_BREAK_RULES = {
    "data-dependent-branch": {"graph-break/data-dependent-branch"},
    "item": {"graph-break/item"},
    "dynamic-output-shape": {"graph-break/dynamic-output-shape"},
    "print": {"graph-break/print"},
    "unsupported-call": {"graph-break/unsupported-call"},
    "explicit": {"graph-break/other"},
    # torch's own graph_break() inside torch (torch.optim's `_use_grad`): no rule says yet that torch put it there,
    # so a finding that reports it as the user's break is counted as misclassified.
    "torch-designed": set(),
    "other": {"graph-break/other"},
}
EXPECTED_RECOMPILE_RULES = {
    "dynamic-shape": {"recompile/dynamic-shape"},
    "python-scalar": {"recompile/python-scalar"},
    "grad-mode": {"recompile/grad-mode", "recompile/other"},
    "type-or-identity": {"recompile/other"},
    "other": {"recompile/other"},
}

_SHAPE_GUARD = re.compile(r"size mismatch|stride mismatch|\.size\(\)\[|\.stride\(\)\[")
_VALUE_GUARD = re.compile(r" == -?\.?\d")
_IDENTITY_GUARD = re.compile(r"___check_type_id|___check_obj_id|\btype\(|\bid\(| is |dtype mismatch|device mismatch|"
                             r"requires_grad mismatch|dispatch key set mismatch")


def break_class(entry: GraphBreak) -> str:
    if entry.gb_type == "Failed to trace builtin operator" and _PRINT_EXPLANATION.search(entry.explanation):
        return "print"
    for cause, types in _BREAK_CLASSES.items():
        if entry.gb_type in types:
            return cause
    return "other"


def recompile_class(entry: Recompile) -> str:
    """The cause of a recompile from all the guard failures torch printed for it, most telling first: a shape
    change, a Python number guarded by value, autograd's grad mode, a type or identity, anything else."""
    guards = "\n".join(entry.guard_failures)
    if _SHAPE_GUARD.search(guards):
        return "dynamic-shape"
    if any(_VALUE_GUARD.search(guard) and not guard.startswith("len(") for guard in entry.guard_failures):
        return "python-scalar"
    if "GLOBAL_STATE changed: grad_mode" in guards:
        return "grad-mode"
    if _IDENTITY_GUARD.search(guards):
        return "type-or-identity"
    return "other"


class Paths:
    """Tells torch's (and Python's own) files from the user's and shortens paths for people; symlinked venvs
    compare equal."""

    def __init__(self, torch_dir: str, repo_root: str):
        self.internal = (os.path.realpath(torch_dir) + os.sep, os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep)
        self.repo_root = os.path.realpath(repo_root) + os.sep

    def real(self, path: str) -> str:
        return os.path.realpath(path) if path and not path.startswith("<") else path

    def is_internal(self, path: str) -> bool:
        return not path or path.startswith("<") or self.real(path).startswith(self.internal)

    def show(self, path: str) -> str:
        real = self.real(path)
        if "site-packages" + os.sep in real:
            return real.split("site-packages" + os.sep, 1)[1]
        if real.startswith(self.repo_root):
            return real[len(self.repo_root):]
        return real


def user_site(entry: GraphBreak, paths: Paths) -> tuple[str, int]:
    if not paths.is_internal(entry.file):
        return paths.real(entry.file), entry.line
    for frame in reversed(entry.traceback):
        if not paths.is_internal(frame.file):
            return paths.real(frame.file), frame.line
    return paths.real(entry.file), entry.line


@dataclasses.dataclass
class Unit:
    family: str          # "graph-break" or "recompile"
    file: str            # shown path
    line: int
    cause: str           # reference class
    torch_count: int     # torch's log entries of this unit
    stored_count: int    # the store's rows for the same compiles at the same location
    located: bool        # a finding of the family at one of the unit's locations
    found: bool          # ... with a rule of the unit's cause
    finding_rules: list[str]


@dataclasses.dataclass
class Disagreement:
    kind: str            # one of KINDS
    key: str             # stable across runs: family or rule, shown path:line, class
    detail: str


KINDS = {
    "not-captured": "torch logged it; the store has no row of that compile at that location",
    "missed": "torch logged it; no finding at its location",
    "misclassified": "findings at its location, none with a rule of its cause",
    "count": "the findings' count at a location differs from the number of torch's log entries there",
    "unsupported": "a finding whose rule and location match nothing torch logged",
    "no-user-location": "a finding whose location is inside torch or Python's standard library (or empty)",
}


@dataclasses.dataclass
class _Reference:
    """torch's entries of one unit and the locations a finding about them may name."""
    entries: list = dataclasses.field(default_factory=list)
    locations: set = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class ModelAgreement:
    units: list[Unit]
    disagreements: list[Disagreement]
    counts: dict

    def summary(self) -> dict:
        result = dict(self.counts)
        for family in ("graph-break", "recompile"):
            units = [unit for unit in self.units if unit.family == family]
            result[family] = {"units": len(units), "found": sum(unit.found for unit in units),
                              "located": sum(unit.located for unit in units)}
        return result


def _break_references(log: TorchLog, paths: Paths, job_files: set[str]) -> dict[tuple[str, int, str], _Reference]:
    references = defaultdict(_Reference)
    for entry in log.graph_breaks:
        file, line = user_site(entry, paths)
        cause = break_class(entry)
        if cause == "explicit" and paths.is_internal(entry.file):
            cause = "torch-designed"
        reference = references[(file, line, cause)]
        reference.entries.append((entry.compile_id, file, line))
        reference.locations.add((file, line))
        reference.locations.update(_innermost_job_line(entry.traceback, paths, job_files))
    return references


def _innermost_job_line(stack: list[Frame], paths: Paths, job_files: set[str]) -> set[tuple[str, int]]:
    """The job's own line closest to a break or a compiled frame: where a finding may also point, since that is the
    line the user can change. Other frames of the stack may be other units' locations, so they do not count."""
    for frame in reversed(stack):
        if paths.real(frame.file) in job_files:
            return {(paths.real(frame.file), frame.line)}
    return set()


def _recompile_references(log: TorchLog, stacks: dict[str, list[Frame]], paths: Paths,
                          job_files: set[str]) -> dict[tuple[str, int, str], _Reference]:
    references = defaultdict(_Reference)
    for entry in log.recompiles:
        file = paths.real(entry.file)
        reference = references[(file, entry.line, recompile_class(entry))]
        reference.entries.append(entry.compile_id)
        reference.locations.add((file, entry.line))
        reference.locations.update(_innermost_job_line(stacks.get(entry.compile_id, [])[:-1], paths, job_files))
    return references


def _located(findings: list[Finding], family: str, locations: set, paths: Paths) -> list[Finding]:
    return [finding for finding in findings if finding.rule.startswith(family + "/")
            and finding.rule != "recompile/limit-hit" and (paths.real(finding.file), finding.line) in locations]


def _score(family, references, expected_rules, findings, stored, paths):
    units, disagreements = [], []
    for (file, line, cause), reference in sorted(references.items()):
        at = _located(findings, family, reference.locations, paths)
        rules = sorted({finding.rule for finding in at})
        stored_count = stored(reference.entries)
        unit = Unit(family, paths.show(file), line, cause, len(reference.entries), stored_count, bool(at),
                    any(rule in expected_rules[cause] for rule in rules), rules)
        units.append(unit)
        key = f"{family} {unit.file}:{line} {cause}"
        if stored_count < unit.torch_count:
            disagreements.append(Disagreement("not-captured", key, f"{unit.torch_count - stored_count} of "
                                                                   f"{unit.torch_count} torch log entries not stored"))
        if not unit.located:
            disagreements.append(Disagreement("missed", key, f"{unit.torch_count} torch log entries, no finding"))
        elif not unit.found:
            disagreements.append(Disagreement("misclassified", key, f"reported as {', '.join(rules)}"))
    # Counts per location where every unit was found (a missed unit is already a disagreement): a finding merges
    # repeats, torch logs each one.
    by_location = defaultdict(int)
    all_found = defaultdict(lambda: True)
    for unit, ((file, line, _), reference) in zip(units, sorted(references.items())):
        by_location[(file, line)] += len(reference.entries)
        all_found[(file, line)] &= unit.found
    for (file, line), torch_count in sorted(by_location.items()):
        reported = sum(finding.count for finding in _located(findings, family, {(file, line)}, paths))
        if all_found[(file, line)] and reported != torch_count:
            disagreements.append(Disagreement("count", f"{family} {paths.show(file)}:{line}",
                                              f"findings count {reported}, torch logged {torch_count}"))
    return units, disagreements


def _supports(finding: Finding, break_refs, recompile_refs, limit_sites, paths: Paths) -> bool:
    location = (paths.real(finding.file), finding.line)
    if finding.rule == "recompile/limit-hit":
        return location in limit_sites
    references, expected = ((break_refs, EXPECTED_BREAK_RULES) if finding.rule.startswith("graph-break/")
                            else (recompile_refs, EXPECTED_RECOMPILE_RULES))
    return any(location in reference.locations and finding.rule in expected[cause]
               for (_, _, cause), reference in references.items())


def compare(log: TorchLog, stacks: dict[str, list[Frame]], side: TorchscopeView, paths: Paths,
            job_files: set[str]) -> ModelAgreement:
    """stacks: the Python stack at the start of each compilation, by compile id (torch_logs.compile_stacks)."""
    stored_breaks = Counter((row.compile_id, paths.real(row.file), row.line) for row in side.breaks)
    stored_recompiles = Counter(row.compile_id for row in side.recompiles)

    def stored_break_rows(entries):
        return sum(min(count, stored_breaks[key]) for key, count in Counter(entries).items())

    def stored_recompile_rows(compile_ids):
        return sum(min(count, stored_recompiles[key]) for key, count in Counter(compile_ids).items())

    real_job_files = {paths.real(file) for file in job_files}
    break_refs = _break_references(log, paths, real_job_files)
    recompile_refs = _recompile_references(log, stacks, paths, real_job_files)
    findings = [f for f in side.findings if f.rule.startswith(("graph-break/", "recompile/"))]
    units, disagreements = _score("graph-break", break_refs, EXPECTED_BREAK_RULES, findings, stored_break_rows, paths)
    recompile_units, recompile_disagreements = _score("recompile", recompile_refs, EXPECTED_RECOMPILE_RULES,
                                                      findings, stored_recompile_rows, paths)
    units += recompile_units
    disagreements += recompile_disagreements

    limit_sites = {(paths.real(hit.file), hit.line) for hit in log.limit_hits}
    for file, line in sorted(limit_sites):
        if not any(f.rule == "recompile/limit-hit" and (paths.real(f.file), f.line) == (file, line) for f in findings):
            disagreements.append(Disagreement("missed", f"recompile {paths.show(file)}:{line} limit-hit",
                                              "torch warned that the recompile limit was hit"))

    supported = outside_torch = in_job = 0
    for finding in findings:
        shown = f"{finding.rule} {paths.show(finding.file)}:{finding.line}"
        if _supports(finding, break_refs, recompile_refs, limit_sites, paths):
            supported += 1
        else:
            disagreements.append(Disagreement("unsupported", shown, f"count {finding.count}; torch logged nothing "
                                                                    "of this cause there"))
        if paths.is_internal(finding.file):
            disagreements.append(Disagreement("no-user-location", shown, "the finding points into torch"))
        else:
            outside_torch += 1
        in_job += paths.real(finding.file) in real_job_files

    counts = {
        "findings": len(findings), "supported_findings": supported, "user_located_findings": outside_torch,
        "job_located_findings": in_job,
        "torch_break_entries": len(log.graph_breaks), "stored_breaks": len(side.breaks),
        "reported_breaks": sum(f.count for f in findings if f.rule.startswith("graph-break/")),
        "torch_recompiles": len(log.recompiles), "stored_recompiles": len(side.recompiles),
        "reported_recompiles": sum(f.count for f in findings
                                   if f.rule.startswith("recompile/") and f.rule != "recompile/limit-hit"),
        "torch_limit_hits": len(limit_sites),
    }
    return ModelAgreement(units, disagreements, counts)
