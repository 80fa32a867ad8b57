"""Matches torchscope's view of a run against torch's own log of it and scores the agreement.

Units (docs/validation.md, "Third-party models"):
- a break unit is a user-attributed break site (file:line) with a cause class. The site is where torch says the
  graph broke; when that is inside torch itself (torch.optim's `_use_grad`, torch.utils.hooks), it is the
  innermost frame of torch's user traceback outside torch and the standard library: the line that called in.
  The class comes from torch's own words (`gb_type`, its "Failed to handle graph break gracefully" preamble, a
  `graph_break()` or an on-purpose skip inside torch). torch logs a break once per frame compilation; all entries
  count. Its locations: torch's site, the user-attributed site and the innermost line of the job's own file on its
  traceback.
- a recompile unit is a recompiled frame (the code object's file:first line) with a cause class, read from the
  guard failures torch printed, judged on the cache entry that could have served the call (`recompile_causes`). Its locations: the frame and the innermost line of the job's own file on the stack
  that called it (from torch's structured trace of the same run).
A finding is *about* a unit when it names one of the unit's locations: a recompile finding by the recompiled
frames of its evidence (its location is the line to change, shared by every frame called from there), or by its
location when the evidence names none; a break finding by its location or its evidence's library frame. A unit is
*located* when a finding of its family is about it, and *found* when one of those has a rule its class maps to.
Counts are checked where units were found: per recompile unit, the recompiles its cause's findings give for its
frame; per user line, the break findings' counts by rule and their break types. A finding is *supported* when a
unit it is about maps to its rule (a recompile finding: every frame it names). A finding is in the job's file when
its location is; that is required whenever torch's stack for it passes through the job's file. A recompile unit
with no finding whose compilations took less than the rule's impact threshold of the run is *below the threshold*
(expected, docs/rules.md), not missed. Stored rows match torch's entries by compile id and by the site anywhere on
the row's stack (breaks) or the recompiled code object (recompiles).
"""
from __future__ import annotations

import dataclasses
import os
import re
import sysconfig
from collections import Counter, defaultdict

import torch_logs
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
_SKIP_TYPES = ("Attempted to call function marked as skipped", "Attempted to inline function marked as skipped",
               "Attempted to inline function marked as skipped (SkipFunctionVariable)")
_PRINT_EXPLANATION = re.compile(r"builtin operator `print`")
# torch names the skipped function's file in the explanation: "... the function `Adam.step` in file `F` ...".
_SKIPPED_FILE = re.compile(r"in file `(?P<file>[^`]+)`")

# docs/rules.md, Recompilation: a recompile group is reported when its compile time is at least this share of the
# run's wall time. A recompile under it is expected to have no finding; the run's load moves it across the line.
RECOMPILE_IMPACT_THRESHOLD = 0.01

# The rules a class may be reported under. A class without a rule of its own belongs to the family's "other".
EXPECTED_BREAK_RULES = {
    "data-dependent-branch": {"graph-break/data-dependent-branch"},
    "item": {"graph-break/item"},
    "dynamic-output-shape": {"graph-break/dynamic-output-shape"},
    "print": {"graph-break/print"},
    "unsupported-call": {"graph-break/unsupported-call"},
    "explicit": {"graph-break/other"},
    "torch-designed": {"graph-break/torch-designed"},
    "eager-fallback": {"graph-break/eager-fallback"},
    "other": {"graph-break/other"},
}
EXPECTED_RECOMPILE_RULES = {
    "dynamic-shape": {"recompile/dynamic-shape"},
    "python-scalar": {"recompile/python-scalar"},
    "dtype-device": {"recompile/dtype-device"},
    "global-state": {"recompile/global-state"},
    "training-flag": {"recompile/training-flag"},
    "type-or-identity": {"recompile/type-or-identity"},
    "other": {"recompile/other"},
}

_SHAPE_GUARD = re.compile(r"size mismatch|stride mismatch|\.size\(\)\[|\.stride\(\)\[")
_VALUE_GUARD = re.compile(r" == -?\.?\d")
_TENSOR_META_GUARD = re.compile(r"dtype mismatch|device mismatch|requires_grad mismatch|dispatch key set mismatch")
_TRAINING_GUARD = re.compile(r"\.training\b")
_IDENTITY_GUARD = re.compile(r"___check_type_id|___check_obj_id|\btype\(|\bid\(| is |got deallocated")
_SCOPE = re.compile(r"\b[LG]\[['\"]([^'\"]+)['\"]\]")
_SHAPE_SUBJECT = re.compile(r"tensor '(?P<tensor>.+?)' (?:size|stride|rank) mismatch|(?P<sized>[^\s(,]+)\.(?:size|stride)\(\)\[")
_META_SUBJECT = re.compile(r"\b(dtype|device|requires_grad|dispatch key set) mismatch")


def break_class(entry: GraphBreak, paths: "Paths") -> str:
    """The cause of a break from torch's own words: a frame torch could not resume (its "Failed to handle graph
    break gracefully" preamble), a break torch's own code makes on purpose (its `graph_break()` call inside torch,
    or a function of torch.optim's LR scheduler that Dynamo skips by design), else the class of its `gb_type`."""
    if entry.frame_skipped:
        return "eager-fallback"
    if entry.gb_type in _BREAK_CLASSES["explicit"] and paths.is_internal(entry.file):
        return "torch-designed"
    skipped = _SKIPPED_FILE.search(entry.explanation) if entry.gb_type in _SKIP_TYPES else None
    if skipped and paths.is_internal(skipped["file"]) and skipped["file"].endswith("optim/lr_scheduler.py"):
        return "torch-designed"
    if entry.gb_type == "Failed to trace builtin operator" and _PRINT_EXPLANATION.search(entry.explanation):
        return "print"
    for cause, types in _BREAK_CLASSES.items():
        if entry.gb_type in types:
            return cause
    return "other"


def recompile_class(entry: Recompile) -> str:
    """The cause of one cache entry's guard failure (or of all the failures given), most telling first: a shape
    change, a Python number guarded by value, a tensor's dtype/device/requires_grad, a global state (grad mode,
    autocast: torch's `GLOBAL_STATE changed`), a module's training flag, a type or identity, anything else."""
    return _failure_class(entry.guard_failures)


def _failure_class(failures: list[str]) -> str:
    guards = "\n".join(failures)
    if _SHAPE_GUARD.search(guards):
        return "dynamic-shape"
    if any(_VALUE_GUARD.search(guard) and not guard.startswith("len(") for guard in failures):
        return "python-scalar"
    if _TENSOR_META_GUARD.search(guards):
        return "dtype-device"
    if "GLOBAL_STATE changed" in guards:
        return "global-state"
    if _TRAINING_GUARD.search(guards):
        return "training-flag"
    if _IDENTITY_GUARD.search(guards):
        return "type-or-identity"
    return "other"


def _guarded(expression: str) -> str:
    """L['x'].weight -> x.weight: the name a guard is about, without Dynamo's scope wrapper."""
    return _SCOPE.sub(r"\1", expression.strip())


def _failure_subject(cause: str, failure: str) -> str:
    """What a failure of that class was about (the tensor, the number, the flag, the state), so that two failures of
    one class on different things count as different reasons."""
    if cause == "dynamic-shape":
        named = _SHAPE_SUBJECT.search(failure)
        return _guarded(named.group("tensor") or named.group("sized")) if named else ""
    if cause == "dtype-device":
        kind = _META_SUBJECT.search(failure)
        return kind.group(1) if kind else ""
    if cause == "global-state":
        state = failure.split("GLOBAL_STATE changed:", 1)[-1]
        return next((name for name in ("autocast", "grad_mode") if name in state), state.split()[0] if state.split() else "")
    if cause in ("python-scalar", "training-flag"):
        left = next((line.split(" == ", 1)[0] for line in failure.splitlines() if " == " in line), "")
        return _guarded(left.split()[-1] if left.split() else left).removesuffix(".training")
    if cause == "type-or-identity":
        return "type" if re.search(r"___check_type_id|\btype\(", failure) else (
            "deallocated" if "got deallocated" in failure else "identity")
    return ""


_SIZES = re.compile(r"expected (\d+), actual (\d+)")


def _grows_dynamic(cause: str, failure: str) -> bool:
    """A failure on a tensor's size that torch's automatic dynamic shapes make dynamic in the next entry: not a stride
    or rank, not sizes 0 or 1 (torch specialises those even with dynamic=True)."""
    if cause != "dynamic-shape" or not re.search(r"size mismatch|\.size\(\)\[", failure):
        return False
    sizes = _SIZES.search(failure)
    return not (sizes and {"0", "1"} & set(sizes.groups()))


def recompile_causes(recompiles: list[Recompile]) -> list[str]:
    """Each recompile's cause, in log order, judged on the cache entry (most recently used first) that could have
    served the call; docs/rules.md states the same definition:
    1. the first entry failing on a tensor's size, unless its sizes are 0 or 1, or that entry already recompiled for
       that tensor's size and the entry compiled then now fails on something else (which the older entry shares: the
       flag of `f(x3, True)`, `f(x4, True)`, `f(x4, False)`);
    2. else the first entry failing on something no earlier recompile of the same frame was for (the no_grad variant
       failing on the grad mode again says nothing new);
    3. else the most recent entry's."""
    earlier: dict[tuple, list[tuple]] = defaultdict(list)  # (entry, cause, subject, failure, compiled entry)
    causes = []
    for recompile in recompiles:
        failures = recompile.guard_failures or [""]
        entries = recompile.failed_entries or [""] * len(failures)
        reasons = []
        for entry, failure in zip(entries, failures):
            cause = _failure_class([failure])
            reasons.append((entry, cause, _failure_subject(cause, failure), failure))
        frame = (recompile.pid, recompile.file, recompile.line, recompile.function)

        def outgrown(reason):
            for entry, cause, subject, failure, compiled in earlier[frame]:
                if not entry or entry != reason[0] or subject != reason[2] or not _grows_dynamic(cause, failure):
                    continue
                successor = next((other for other in reasons if other[0] == compiled), None)
                if successor is not None and successor[1:3] != (cause, subject):
                    return True
            return False

        known = [item[1:3] for item in earlier[frame]]
        chosen = (next((reason for reason in reasons if _grows_dynamic(reason[1], reason[3]) and not outgrown(reason)),
                       None)
                  or next((reason for reason in reasons if reason[1:3] not in known), reasons[0]))
        earlier[frame].append((*chosen, recompile.compile_id))
        causes.append(chosen[1])
    return causes


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
    stored_count: int    # the store's rows for the same compiles and sites
    located: bool        # a finding of the family about it (its location or a site of its evidence is the unit's)
    found: bool          # ... with a rule of the unit's cause
    finding_rules: list[str]
    below_threshold: bool = False  # not located, and too cheap for the rule to report (RECOMPILE_IMPACT_THRESHOLD)


@dataclasses.dataclass
class Disagreement:
    kind: str            # one of KINDS
    key: str             # stable across runs: family or rule, shown path:line, class
    detail: str


KINDS = {
    "not-captured": "torch logged it; the store has no row of that compile with that site on its stack",
    "missed": "torch logged it; no finding about it",
    "below-threshold": "torch logged it; no finding about it (or fewer recompiles in the findings' evidence), and "
                       "the compilations left out took less of the run than the rule's impact threshold (not a "
                       "failure: docs/rules.md, Recompilation)",
    "misclassified": "findings about it, none with a rule of its cause",
    "count": "the counts the findings give for a frame or a line differ from the number of torch's log entries",
    "unsupported": "a finding (or a frame its evidence names) whose rule matches nothing torch logged there",
    "no-user-location": "a finding whose location is inside torch or Python's standard library (or empty)",
    "not-in-job-file": "a finding outside the job's file although torch's stack for it passes through that file",
}


@dataclasses.dataclass
class _Reference:
    """torch's entries of one unit and the locations a finding about them may name."""
    entries: list = dataclasses.field(default_factory=list)  # one per log entry: the entry's index in the log
    locations: set = dataclasses.field(default_factory=set)
    job_lines: set = dataclasses.field(default_factory=set)  # the job's lines among the locations


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
                              "located": sum(unit.located for unit in units),
                              "below_threshold": sum(unit.below_threshold for unit in units)}
        return result


def _innermost_job_line(stack: list[Frame], paths: Paths, job_files: set[str]) -> set[tuple[str, int]]:
    """The job's own line closest to a break or a compiled frame: where a finding may also point, since that is the
    line the user can change. Other frames of the stack may be other units' locations, so they do not count."""
    for frame in reversed(stack):
        if paths.real(frame.file) in job_files:
            return {(paths.real(frame.file), frame.line)}
    return set()


def _break_references(log: TorchLog, paths: Paths, job_files: set[str]) -> dict[tuple[str, int, str], _Reference]:
    references = defaultdict(_Reference)
    for index, entry in enumerate(log.graph_breaks):
        file, line = user_site(entry, paths)
        reference = references[(file, line, break_class(entry, paths))]
        reference.entries.append(index)
        job_line = _innermost_job_line(entry.traceback, paths, job_files)
        reference.locations.update({(file, line), (paths.real(entry.file), entry.line)} | job_line)
        reference.job_lines.update(job_line)
    return references


def _recompile_references(log: TorchLog, stacks: dict[str, list[Frame]], paths: Paths,
                          job_files: set[str]) -> dict[tuple[str, int, str], _Reference]:
    references = defaultdict(_Reference)
    for index, (entry, cause) in enumerate(zip(log.recompiles, recompile_causes(log.recompiles))):
        file = paths.real(entry.file)
        reference = references[(file, entry.line, cause)]
        reference.entries.append(index)
        job_line = _innermost_job_line(stacks.get(entry.compile_id, [])[:-1], paths, job_files)
        reference.locations.update({(file, entry.line)} | job_line)
        reference.job_lines.update(job_line)
        if file in job_files:
            reference.job_lines.add((file, entry.line))
    return references


def _sites(finding: Finding, paths: Paths) -> set[tuple[str, int]]:
    return {(paths.real(file), line) for file, line in finding.sites()}


def _of_family(findings: list[Finding], family: str) -> list[Finding]:
    return [finding for finding in findings
            if finding.rule.startswith(family + "/") and finding.rule != "recompile/limit-hit"]


def _about(findings: list[Finding], locations: set, paths: Paths) -> list[Finding]:
    return [finding for finding in findings if _sites(finding, paths) & locations]


def _score(family, references, expected_rules, findings, stored_entries, paths,
           below_threshold=lambda entries: False):
    units, disagreements = [], []
    for (file, line, cause), reference in sorted(references.items()):
        about = _about(findings, reference.locations, paths)
        rules = sorted({finding.rule for finding in about})
        stored_count = sum(index in stored_entries for index in reference.entries)
        unit = Unit(family, paths.show(file), line, cause, len(reference.entries), stored_count, bool(about),
                    any(rule in expected_rules[cause] for rule in rules), rules)
        units.append(unit)
        key = f"{family} {unit.file}:{line} {cause}"
        if stored_count < unit.torch_count:
            disagreements.append(Disagreement("not-captured", key, f"{unit.torch_count - stored_count} of "
                                                                   f"{unit.torch_count} torch log entries not stored"))
        if not unit.located:
            kind = "below-threshold" if below_threshold(reference.entries) else "missed"
            unit.below_threshold = kind == "below-threshold"
            disagreements.append(Disagreement(kind, key, f"{unit.torch_count} torch log entries, no finding"))
        elif not unit.found:
            disagreements.append(Disagreement("misclassified", key, f"reported as {', '.join(rules)}"))
    return units, disagreements


def _recompile_counts(references, units, findings, paths, cheap_entries) -> list[Disagreement]:
    """Per found unit (a missed one is already a disagreement): the recompiles that the findings of its cause give
    for its frame in their evidence against torch's entries of that frame and cause. Fewer is below the threshold,
    not a failure, when the entries left out can be the unit's recompiles too cheap for the rule to report."""
    disagreements = []
    for unit, ((file, line, cause), reference) in zip(units, sorted(references.items())):
        if not unit.found:
            continue
        reported = 0
        for finding in findings:
            if finding.rule not in EXPECTED_RECOMPILE_RULES[cause]:
                continue
            if finding.frames:
                reported += sum(count for frame_file, frame_line, count in finding.frames
                                if (paths.real(frame_file), frame_line) == (file, line))
            elif (paths.real(finding.file), finding.line) == (file, line):
                reported += finding.count
        if reported != unit.torch_count:
            cheap = cheap_entries(reference.entries)
            kind = "below-threshold" if unit.torch_count - cheap <= reported < unit.torch_count else "count"
            detail = f"findings' evidence gives {reported}, torch logged {unit.torch_count}"
            if kind == "below-threshold":
                detail += f" ({cheap} under the threshold)"
            disagreements.append(Disagreement(kind, f"recompile {unit.file}:{line} {cause}", detail))
    return disagreements


def _break_counts(log: TorchLog, references, units, findings, paths, job_files) -> list[Disagreement]:
    """Per user line (the job's line on torch's traceback, else the user-attributed site) whose units were all
    found: the findings there against torch's entries with that line, by rule (their counts) and by break type
    (their evidence)."""
    torch_types, torch_rules, all_found = defaultdict(Counter), defaultdict(Counter), defaultdict(lambda: True)
    for unit, ((file, line, cause), reference) in zip(units, sorted(references.items())):
        for index in reference.entries:
            entry = log.graph_breaks[index]
            where = next(iter(_innermost_job_line(entry.traceback, paths, job_files)), (file, line))
            torch_types[where][entry.gb_type] += 1
            torch_rules[where][" or ".join(sorted(EXPECTED_BREAK_RULES[cause]))] += 1
            all_found[where] &= unit.found
    disagreements = []
    for where, expected in sorted(torch_types.items()):
        if not all_found[where]:
            continue
        at = [finding for finding in findings if (paths.real(finding.file), finding.line) == where]
        reported = Counter()
        for finding in at:
            for break_type, count in finding.breaks:
                reported[break_type] += count
        reported_rules = Counter()
        for finding in at:
            rules = next((key for key in torch_rules[where] if finding.rule in key.split(" or ")), finding.rule)
            reported_rules[rules] += finding.count
        shown = f"graph-break {paths.show(where[0])}:{where[1]}"
        if reported_rules != torch_rules[where]:
            disagreements.append(Disagreement("count", shown, f"findings give {_types(reported_rules)}, torch "
                                                              f"logged {_types(torch_rules[where])}"))
        elif reported != expected:
            disagreements.append(Disagreement("count", shown, f"findings' evidence gives {_types(reported)}, torch "
                                                              f"logged {_types(expected)}"))
    return disagreements


def _types(counts: Counter) -> str:
    return ", ".join(f"{count} {name or '(none)'}" for name, count in sorted(counts.items())) or "nothing"


def _supported(finding: Finding, break_refs, recompile_refs, limit_sites, paths: Paths) -> tuple[bool, str]:
    """Whether torch logged what the finding says about the sites it names, and if not, which sites lack it."""
    sites = _sites(finding, paths)
    if finding.rule == "recompile/limit-hit":
        return bool(sites & limit_sites), ""
    references, expected = ((break_refs, EXPECTED_BREAK_RULES) if finding.rule.startswith("graph-break/")
                            else (recompile_refs, EXPECTED_RECOMPILE_RULES))

    def supports(locations):
        return any(locations & reference.locations and finding.rule in expected[cause]
                   for (_, _, cause), reference in references.items())

    if not finding.frames:
        return supports(sites), ""
    # Each recompiled frame the evidence names must have recompiled for the finding's cause.
    lacking = [f"{paths.show(file)}:{line}" for file, line, _ in finding.frames
               if not supports({(paths.real(file), line)})]
    return not lacking, ", ".join(lacking)


def _stored_break_entries(log: TorchLog, side: TorchscopeView, paths: Paths) -> set[int]:
    """torch's break entries that have a store row: same compile id, and torch's site or its user-attributed site
    anywhere on the row's stack (the row's own line is the user's). Each row stands for one entry."""
    rows = defaultdict(list)
    for row in side.breaks:
        rows[row.compile_id].append({(paths.real(row.file), row.line)} |
                                    {(paths.real(file), line) for file, line in row.stack})
    stored = set()
    for index, entry in enumerate(log.graph_breaks):
        wanted = {(paths.real(entry.file), entry.line), user_site(entry, paths)}
        candidates = rows.get(entry.compile_id, [])
        match = next((i for i, sites in enumerate(candidates) if sites & wanted), None)
        if match is not None:
            candidates.pop(match)
            stored.add(index)
    return stored


def _stored_recompile_entries(log: TorchLog, side: TorchscopeView, paths: Paths) -> set[int]:
    """torch's recompile entries that have a store row of the same compile id and recompiled code object."""
    rows = Counter((row.compile_id, paths.real(row.file), row.line) for row in side.recompiles)
    stored = set()
    for index, entry in enumerate(log.recompiles):
        key = (entry.compile_id, paths.real(entry.file), entry.line)
        if rows[key] > 0:
            rows[key] -= 1
            stored.add(index)
    return stored


def compare(log: TorchLog, stacks: dict[str, list[Frame]], side: TorchscopeView, paths: Paths,
            job_files: set[str]) -> ModelAgreement:
    """stacks: the Python stack at the start of each compilation, by compile id (torch_logs.compile_stacks)."""
    torch_logs.complete_tracebacks(log, stacks)
    real_job_files = {paths.real(file) for file in job_files}
    break_refs = _break_references(log, paths, real_job_files)
    recompile_refs = _recompile_references(log, stacks, paths, real_job_files)
    findings = [f for f in side.findings if f.rule.startswith(("graph-break/", "recompile/"))]
    break_findings, recompile_findings = _of_family(findings, "graph-break"), _of_family(findings, "recompile")
    units, disagreements = _score("graph-break", break_refs, EXPECTED_BREAK_RULES, break_findings,
                                  _stored_break_entries(log, side, paths), paths)
    disagreements += _break_counts(log, break_refs, units, break_findings, paths, real_job_files)
    def seconds(index):
        return side.compile_seconds.get(log.recompiles[index].compile_id, 0.0)

    def below_threshold(entries):
        limit = RECOMPILE_IMPACT_THRESHOLD * side.duration_seconds
        return side.duration_seconds > 0 and sum(map(seconds, entries)) < limit

    def cheap_entries(entries):
        if side.duration_seconds <= 0:
            return 0
        return sum(seconds(index) < RECOMPILE_IMPACT_THRESHOLD * side.duration_seconds for index in entries)

    recompile_units, recompile_disagreements = _score("recompile", recompile_refs, EXPECTED_RECOMPILE_RULES,
                                                      recompile_findings, _stored_recompile_entries(log, side, paths),
                                                      paths, below_threshold)
    disagreements += recompile_disagreements
    disagreements += _recompile_counts(recompile_refs, recompile_units, recompile_findings, paths, cheap_entries)
    units += recompile_units

    limit_sites = {(paths.real(hit.file), hit.line) for hit in log.limit_hits}
    for file, line in sorted(limit_sites):
        if not any(f.rule == "recompile/limit-hit" and (file, line) in _sites(f, paths) for f in findings):
            disagreements.append(Disagreement("missed", f"recompile {paths.show(file)}:{line} limit-hit",
                                              "torch warned that the recompile limit was hit"))

    supported = outside_torch = in_job = with_job_line = 0
    for finding in findings:
        shown = f"{finding.rule} {paths.show(finding.file)}:{finding.line}"
        ok, lacking = _supported(finding, break_refs, recompile_refs, limit_sites, paths)
        if ok:
            supported += 1
        else:
            disagreements.append(Disagreement("unsupported", shown, f"count {finding.count}; torch logged nothing "
                                              "of this cause " + (f"for {lacking}" if lacking else "there")))
        if paths.is_internal(finding.file):
            disagreements.append(Disagreement("no-user-location", shown, "the finding points into torch"))
        else:
            outside_torch += 1
        in_job_file = paths.real(finding.file) in real_job_files
        in_job += in_job_file
        references = break_refs if finding.rule.startswith("graph-break/") else recompile_refs
        job_lines = set().union(*(reference.job_lines for reference in references.values()
                                  if _sites(finding, paths) & reference.locations))
        if job_lines or in_job_file:
            with_job_line += 1
            if not in_job_file:
                disagreements.append(Disagreement("not-in-job-file", shown, "torch's stack passes through "
                                                  + ", ".join(f"{paths.show(f)}:{l}" for f, l in sorted(job_lines))))

    counts = {
        "findings": len(findings), "supported_findings": supported, "user_located_findings": outside_torch,
        "job_located_findings": in_job, "job_line_findings": with_job_line,
        "torch_break_entries": len(log.graph_breaks), "stored_breaks": len(side.breaks),
        "reported_breaks": sum(f.count for f in break_findings),
        "torch_recompiles": len(log.recompiles), "stored_recompiles": len(side.recompiles),
        "reported_recompiles": sum(f.count for f in recompile_findings),
        "torch_limit_hits": len(limit_sites),
    }
    return ModelAgreement(units, disagreements, counts)
