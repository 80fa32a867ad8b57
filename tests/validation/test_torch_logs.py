"""The reference side of the validation suite: torch 2.13's TORCH_LOGS output (data/*.stderr.gz, captured from the
suite's jobs with the venv and checkout paths replaced by /venv and /repo) parsed into break sites and recompiles
with their cause classes, compared with golden/<name>.json (TORCHSCOPE_UPDATE_GOLDEN=1 rewrites the golden files);
the compilations' stacks from the structured trace (data/*.trace.gz, its `str` and `dynamo_start` lines); and the
scoring of docs/validation.md on that input.
"""
import dataclasses
import gzip
import json
import os
import unittest
from pathlib import Path

import agreement
import torch_logs
from torchscope_side import Finding, StoredBreak, StoredRecompile, TorchscopeView

HERE = Path(__file__).resolve().parent
PATHS = agreement.Paths("/venv/site-packages/torch", "/repo")


def read_log(name: str) -> torch_logs.TorchLog:
    return torch_logs.parse(gzip.decompress((HERE / "data" / f"{name}.stderr.gz").read_bytes()).decode())


def read_stacks(name: str) -> dict:
    return torch_logs.compile_stacks(gzip.decompress((HERE / "data" / f"{name}.trace.gz").read_bytes()).decode())


def summary(log: torch_logs.TorchLog) -> dict:
    breaks = []
    for entry in log.graph_breaks:
        file, line = agreement.user_site(entry, PATHS)
        breaks.append({"compile_id": entry.compile_id, "site": f"{PATHS.show(entry.file)}:{entry.line}",
                       "user_site": f"{PATHS.show(file)}:{line}", "gb_type": entry.gb_type,
                       "class": agreement.break_class(entry, PATHS), "duplicate": entry.duplicate,
                       "frame_skipped": entry.frame_skipped, "traceback_frames": len(entry.traceback)})
    recompiles = [{"compile_id": entry.compile_id, "frame": f"{entry.function} {PATHS.show(entry.file)}:{entry.line}",
                   "class": cause, "guard_failures": entry.guard_failures}
                  for entry, cause in zip(log.recompiles, agreement.recompile_causes(log.recompiles))]
    limits = [{"frame": f"{hit.function} {PATHS.show(hit.file)}:{hit.line}", "limit": hit.limit} for hit in log.limit_hits]
    return {"graph_breaks": breaks, "recompiles": recompiles, "limit_hits": limits}


class GoldenTest(unittest.TestCase):
    def test_logs_match_golden(self):
        names = sorted(path.name.removesuffix(".stderr.gz") for path in (HERE / "data").glob("*.stderr.gz"))
        self.assertTrue(names)
        for name in names:
            with self.subTest(name):
                actual = summary(read_log(name))
                golden = HERE / "golden" / f"{name}.json"
                if os.environ.get("TORCHSCOPE_UPDATE_GOLDEN") == "1":
                    golden.parent.mkdir(exist_ok=True)
                    golden.write_text(json.dumps(actual, indent=1) + "\n")
                    continue
                self.assertTrue(golden.is_file(), f"no {golden} (run with TORCHSCOPE_UPDATE_GOLDEN=1)")
                self.assertEqual(json.loads(golden.read_text()), actual)


class ParseTest(unittest.TestCase):
    def test_job_output_between_log_lines_is_ignored(self):
        text = ("V1122 23:38:28.405000 16960 /venv/site-packages/torch/_dynamo/guards.py:5396] [0/1] [__recompiles] "
                "Recompiling function f in /repo/job.py:2\n"
                "loss 0.25\n"
                "V1122 23:38:28.405000 16960 /venv/site-packages/torch/_dynamo/guards.py:5396] [0/1] [__recompiles] "
                "    triggered by the following guard failure(s):\n"
                "V1122 23:38:28.405000 16960 /venv/site-packages/torch/_dynamo/guards.py:5396] [0/1] [__recompiles] "
                "    - 0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4\n")
        log = torch_logs.parse(text)
        self.assertEqual(len(log.recompiles), 1)
        self.assertEqual(log.recompiles[0].guard_failures, ["tensor 'x' size mismatch at index 0. expected 3, actual 4"])
        self.assertEqual(agreement.recompile_class(log.recompiles[0]), "dynamic-shape")

    def test_break_inside_torch_is_attributed_to_the_calling_line(self):
        designed = [entry for entry in read_log("hf_llama_train_eval").graph_breaks if "optimizer.py" in entry.file]
        self.assertEqual(len(designed), 1)
        file, line = agreement.user_site(designed[0], PATHS)
        self.assertEqual(f"{PATHS.show(file)}:{line}", "tests/validation/jobs/hf_llama_train_eval.py:24")


    def test_compile_stacks_name_the_line_that_called_a_recompiled_frame(self):
        stacks = read_stacks("hf_llama_train_eval")
        adam_step = stacks["3/1"]
        self.assertEqual((PATHS.show(adam_step[-1].file), adam_step[-1].line), ("torch/optim/adam.py", 214))
        self.assertIn(("tests/validation/jobs/hf_llama_train_eval.py", 24),
                      [(PATHS.show(frame.file), frame.line) for frame in adam_step])


class ClassTest(unittest.TestCase):
    """torch's side of the cause taxonomy, read from torch's own guard text and break messages."""

    def recompile(self, *guards):
        return agreement.recompile_class(torch_logs.Recompile("0/1", 1, "f", "/repo/job.py", 2, list(guards)))

    def test_recompile_classes_from_guard_text(self):
        cases = {
            "tensor 'x' size mismatch at index 0. expected 3, actual 4": "dynamic-shape",
            "num_nodes == 120": "python-scalar",
            "self.param_groups[0]['lr'] == 0.001": "python-scalar",
            "tensor 'x' dtype mismatch. expected Float, actual Double": "dtype-device",
            "tensor 'x' requires_grad mismatch. expected requires_grad=0": "dtype-device",
            "GLOBAL_STATE changed: grad_mode": "global-state",
            "GLOBAL_STATE changed: autocast": "global-state",
            "L['self']._modules['drop'].training == True": "training-flag",
            "___check_type_id(L['x'], 94345720)": "type-or-identity",
            "caches[0][0] is None": "type-or-identity",
            "len(kwargs) == 2": "other",
            "key == 'attentions'": "other",
        }
        for guard, cause in cases.items():
            with self.subTest(guard):
                self.assertEqual(self.recompile(guard), cause)

    def test_the_most_telling_guard_of_a_recompile_decides(self):
        self.assertEqual(self.recompile("tensor 'x' requires_grad mismatch. expected requires_grad=1",
                                        "tensor 'x' size mismatch at index 0. expected 120, actual 150"),
                         "dynamic-shape")

    def test_torch_designed_breaks_are_torch_own(self):
        classes = {PATHS.show(entry.file): agreement.break_class(entry, PATHS)
                   for entry in read_log("hf_llama_train_eval").graph_breaks}
        # torch.optim's `_use_grad` graph_break(), and the LR scheduler's wrapper that Dynamo skips on purpose.
        self.assertEqual(classes, {"torch/optim/optimizer.py": "torch-designed",
                                   "tests/validation/jobs/hf_llama_train_eval.py": "torch-designed"})

    def test_a_frame_torch_could_not_resume_is_an_eager_fallback(self):
        entries = read_log("hf_vit_config_change").graph_breaks
        skipped = [entry for entry in entries if entry.frame_skipped]
        self.assertTrue(skipped)
        self.assertEqual({agreement.break_class(entry, PATHS) for entry in skipped}, {"eager-fallback"})
        self.assertEqual({entry.gb_type for entry in skipped}, {"Unsupported context manager",
                                                                 "setattr() on unsupported type"})


class RepeatedBreakTest(unittest.TestCase):
    def test_a_repeated_break_takes_the_lines_of_its_own_callers(self):
        def frame(file, line, function):
            return torch_logs.Frame(file, line, function)

        first = torch_logs.GraphBreak("0/0", 1, "/venv/site-packages/torch_geometric/utils/loop.py", 650,
                                      "Dynamic shape operator", "", [
                                          frame("/repo/job.py", 46, "<module>"), frame("/repo/job.py", 34, "main"),
                                          frame("/venv/site-packages/torch/nn/modules/module.py", 1789, "_call_impl"),
                                          frame("/venv/site-packages/torch_geometric/nn/conv/gcn_conv.py", 241,
                                                "forward"),
                                          frame("/venv/site-packages/torch_geometric/utils/loop.py", 650, "loops")],
                                      duplicate=False)
        repeat = dataclasses.replace(first, compile_id="1/4", traceback=[], duplicate=True)
        log = torch_logs.TorchLog([first, repeat], [], [])
        evaluation = [frame("/repo/job.py", 46, "<module>"), frame("/repo/job.py", 41, "main"),
                      frame("/venv/site-packages/torch/_dynamo/eval_frame.py", 511, "__call__"),
                      frame("/venv/site-packages/torch/nn/modules/module.py", 1789, "_call_impl"),
                      frame("/venv/site-packages/torch_geometric/nn/conv/gcn_conv.py", 227, "forward")]
        torch_logs.complete_tracebacks(log, {"1/4": evaluation})
        self.assertEqual([(f.line, f.function) for f in repeat.traceback],
                         [(46, "<module>"), (41, "main"), (1789, "_call_impl"), (241, "forward"), (650, "loops")])


JOB = "/repo/tests/validation/jobs/hf_llama_train_eval.py"
ADAM = "/venv/site-packages/torch/optim/adam.py"
GENERIC = "/venv/site-packages/transformers/utils/generic.py"
DESIGNED_TYPES = [("Attempted to call function marked as skipped", 1), ("Call to `torch._dynamo.graph_break()`", 1)]


def the_findings():
    """What torchscope reports on the Llama job: every finding at the user's line, the frames in the evidence."""
    return [
        Finding("graph-break/torch-designed", JOB, 24, "optimizer_step", 2, breaks=DESIGNED_TYPES),
        Finding("recompile/python-scalar", JOB, 19, "main", 1, frames=[(ADAM, 214, 1)], library_frame=(ADAM, 214)),
        Finding("recompile/global-state", JOB, 38, "main", 1, frames=[(GENERIC, 937, 1)],
                library_frame=(GENERIC, 937)),
    ]


class ScoreTest(unittest.TestCase):
    """The definitions of docs/validation.md on the Llama job's log and a chosen set of findings."""

    def score(self, findings, breaks=(), recompiles=(), compile_seconds=None, duration=0.0):
        log = read_log("hf_llama_train_eval")
        side = TorchscopeView(list(breaks), list(recompiles), findings, "", compile_seconds or {}, duration)
        return agreement.compare(log, read_stacks("hf_llama_train_eval"), side, PATHS, {JOB})

    def kinds(self, result, *ignored):
        return sorted((item.kind, item.key) for item in result.disagreements if item.kind not in ignored)

    def test_nothing_reported_misses_every_unit(self):
        result = self.score([])
        summary = result.summary()
        self.assertEqual(summary["graph-break"], {"units": 1, "found": 0, "located": 0, "below_threshold": 0})
        self.assertEqual(summary["recompile"], {"units": 2, "found": 0, "located": 0, "below_threshold": 0})
        self.assertEqual(self.kinds(result), [
            ("missed", "graph-break tests/validation/jobs/hf_llama_train_eval.py:24 torch-designed"),
            ("missed", "recompile torch/optim/adam.py:214 python-scalar"),
            ("missed", "recompile transformers/utils/generic.py:937 global-state"),
            ("not-captured", "graph-break tests/validation/jobs/hf_llama_train_eval.py:24 torch-designed"),
            ("not-captured", "recompile torch/optim/adam.py:214 python-scalar"),
            ("not-captured", "recompile transformers/utils/generic.py:937 global-state"),
        ])

    def test_findings_at_the_users_lines_are_about_the_frames_their_evidence_names(self):
        result = self.score(the_findings())
        summary = result.summary()
        self.assertEqual((summary["graph-break"]["found"], summary["recompile"]["found"]), (1, 2))
        self.assertEqual((summary["findings"], summary["supported_findings"], summary["user_located_findings"],
                          summary["job_located_findings"], summary["job_line_findings"]), (3, 3, 3, 3, 3))
        self.assertEqual(self.kinds(result, "not-captured"), [])

    def test_the_location_alone_does_not_make_a_recompile_finding_about_other_frames(self):
        # Line 24 (`optimizer.step()`) is the job's line on the stack of Adam.step's recompile, but the evidence
        # names generic.py's frame only.
        findings = the_findings()[:1] + [Finding("recompile/python-scalar", JOB, 24, "main", 1,
                                                 frames=[(GENERIC, 937, 1)])]
        self.assertEqual(self.kinds(self.score(findings), "not-captured"), [
            ("misclassified", "recompile transformers/utils/generic.py:937 global-state"),
            ("missed", "recompile torch/optim/adam.py:214 python-scalar"),
            ("unsupported", "recompile/python-scalar tests/validation/jobs/hf_llama_train_eval.py:24"),
        ])

    def test_counts_are_checked_per_frame_and_per_line(self):
        findings = the_findings()
        findings[1].frames = [(ADAM, 214, 2)]  # the evidence claims two recompiles of Adam.step
        findings[0] = Finding("graph-break/torch-designed", JOB, 24, "optimizer_step", 1, breaks=DESIGNED_TYPES[:1])
        findings.append(Finding("graph-break/other", JOB, 24, "optimizer_step", 1, breaks=DESIGNED_TYPES[1:]))
        self.assertEqual(self.kinds(self.score(findings), "not-captured"), [
            ("count", "graph-break tests/validation/jobs/hf_llama_train_eval.py:24"),
            ("count", "recompile torch/optim/adam.py:214 python-scalar"),
            ("unsupported", "graph-break/other tests/validation/jobs/hf_llama_train_eval.py:24"),
        ])

    def test_a_finding_outside_the_jobs_file_is_flagged_when_the_job_has_a_line_for_it(self):
        findings = the_findings()
        findings[2] = Finding("recompile/global-state", GENERIC, 937, "wrapper", 1, frames=[(GENERIC, 937, 1)])
        result = self.score(findings)
        summary = result.summary()
        self.assertEqual((summary["user_located_findings"], summary["job_located_findings"],
                          summary["job_line_findings"]), (3, 2, 3))
        self.assertEqual(self.kinds(result, "not-captured"), [
            ("not-in-job-file", "recompile/global-state transformers/utils/generic.py:937")])

    def test_stored_rows_match_by_compile_id_and_the_site_on_their_stack(self):
        stack = [("/repo/tests/validation/jobs/hf_llama_train_eval.py", 24),
                 ("/venv/site-packages/torch/optim/optimizer.py", 79)]
        breaks = [StoredBreak("1/0", JOB, 24, "Attempted to call function marked as skipped", stack[:1]),
                  StoredBreak("2/0", JOB, 24, "Call to `torch._dynamo.graph_break()`", stack),
                  StoredBreak("3/0", JOB, 24, "Call to `torch._dynamo.graph_break()`", stack)]  # no such compile
        recompiles = [StoredRecompile("3/1", "step", ADAM, 214, "python-scalar", False),
                      StoredRecompile("0/1", "forward", GENERIC, 1, "global-state", False)]  # another code object
        units = {(unit.file, unit.cause): unit.stored_count
                 for unit in self.score(the_findings(), breaks, recompiles).units}
        self.assertEqual(units, {("tests/validation/jobs/hf_llama_train_eval.py", "torch-designed"): 2,
                                 ("torch/optim/adam.py", "python-scalar"): 1,
                                 ("transformers/utils/generic.py", "global-state"): 0})

    def test_a_recompile_too_cheap_for_the_rule_is_below_the_threshold(self):
        findings = the_findings()[:2]
        cheap = self.score(findings, compile_seconds={"0/1": 0.05}, duration=10.0)
        costly = self.score(findings, compile_seconds={"0/1": 0.5}, duration=10.0)
        key = "recompile transformers/utils/generic.py:937 global-state"
        self.assertIn(("below-threshold", key), self.kinds(cheap))
        self.assertEqual(cheap.summary()["recompile"]["below_threshold"], 1)
        self.assertIn(("missed", key), self.kinds(costly))

    def test_a_recompile_count_short_by_cheap_recompiles_is_below_the_threshold(self):
        # ViT's wrapper recompiled twice on its config's identity (0/1, 0/2); the finding's evidence gives one.
        wrapper = torch_logs.Recompile("0/1", 1, "wrapper", GENERIC, 937, ["self.config.problem_type is None"])
        log = torch_logs.TorchLog([], [wrapper, dataclasses.replace(wrapper, compile_id="0/2")], [])
        finding = Finding("recompile/type-or-identity", "/repo/tests/validation/jobs/hf_vit_config_change.py", 21,
                          "main", 1, frames=[(GENERIC, 937, 1)])
        key = "recompile transformers/utils/generic.py:937 type-or-identity"
        for cost, kind in ((0.05, "below-threshold"), (0.5, "count")):
            with self.subTest(cost):
                side = TorchscopeView([], [], [finding], "", {"0/1": 5.0, "0/2": cost}, 10.0)
                result = agreement.compare(log, {}, side, PATHS, set())
                self.assertIn((kind, key), [(item.kind, item.key) for item in result.disagreements])

    def test_a_recompiles_cause_is_its_first_entry_failing_for_a_new_reason(self):
        # ViT's 0/2: the newest entry fails on len(kwargs), the older one on the identity 0/1 was already for.
        causes = agreement.recompile_causes(read_log("hf_vit_config_change").recompiles)
        self.assertEqual(causes[:2], ["type-or-identity", "other"])

    def test_a_recompiles_cause_is_the_size_of_the_entry_that_could_have_served_the_call(self):
        # GPT-2's generate() with prompts of 5 then 8 tokens: the decode entries fail on the one-token input and on
        # the empty cache, the prompt's entry on the length alone.
        def recompile(compile_id, *failures):
            return torch_logs.Recompile(compile_id, 1, "wrapper", GENERIC, 937, [guard for _, guard in failures],
                                        [entry for entry, _ in failures])
        generate = [
            recompile("0/1", ("0/0", "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 5, actual 1")),
            recompile("0/2", ("0/1", "tensor 'kwargs['past_key_values'].layers[0].keys' size mismatch at index 2. "
                                     "expected 5, actual 6"),
                      ("0/0", "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 5, actual 1")),
            recompile("0/3", ("0/2", "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 1, actual 8"),
                      ("0/1", "expected type of 'kwargs['past_key_values'].layers[0].keys' to be a tensor type, ' but "
                              "found <class 'NoneType'>"),
                      ("0/0", "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 5, actual 8"))]
        self.assertEqual(agreement.recompile_causes(generate), ["dynamic-shape"] * 3)
        # f(x3, 2), f(x4, 2), f(x5, 3): the first entry's size was 0/1's cause; 0/1 fails on the number.
        number = [recompile("0/1", ("0/0", "tensor 'x' size mismatch at index 0. expected 3, actual 4")),
                  recompile("0/2", ("0/1", "n == 2"), ("0/0", "tensor 'x' size mismatch at index 0. expected 3, "
                                                              "actual 5"))]
        self.assertEqual(agreement.recompile_causes(number), ["dynamic-shape", "python-scalar"])


if __name__ == "__main__":
    unittest.main()
