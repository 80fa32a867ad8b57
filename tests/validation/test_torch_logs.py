"""The reference side of the validation suite: torch 2.13's TORCH_LOGS output (data/*.stderr.gz, captured from the
suite's jobs with the venv and checkout paths replaced by /venv and /repo) parsed into break sites and recompiles
with their cause classes, compared with golden/<name>.json (TORCHSCOPE_UPDATE_GOLDEN=1 rewrites the golden files);
the compilations' stacks from the structured trace (data/*.trace.gz, its `str` and `dynamo_start` lines); and the
scoring of docs/validation.md on that input.
"""
import gzip
import json
import os
import unittest
from pathlib import Path

import agreement
import torch_logs
from torchscope_side import Finding, TorchscopeView

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
                       "class": agreement.break_class(entry), "duplicate": entry.duplicate,
                       "traceback_frames": len(entry.traceback)})
    recompiles = [{"compile_id": entry.compile_id, "frame": f"{entry.function} {PATHS.show(entry.file)}:{entry.line}",
                   "class": agreement.recompile_class(entry), "guard_failures": entry.guard_failures}
                  for entry in log.recompiles]
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


JOB = "/repo/tests/validation/jobs/hf_llama_train_eval.py"


class ScoreTest(unittest.TestCase):
    """The definitions of docs/validation.md on the Llama job's log and a chosen set of findings."""

    def score(self, findings):
        log = read_log("hf_llama_train_eval")
        return agreement.compare(log, read_stacks("hf_llama_train_eval"), TorchscopeView([], [], findings), PATHS,
                                 {JOB})

    def test_nothing_reported_misses_every_unit(self):
        result = self.score([])
        summary = result.summary()
        self.assertEqual(summary["graph-break"], {"units": 2, "found": 0, "located": 0})
        self.assertEqual(summary["recompile"], {"units": 2, "found": 0, "located": 0})
        self.assertEqual(sum(item.kind == "not-captured" for item in result.disagreements), 4)

    def test_findings_are_matched_by_location_and_rule(self):
        result = self.score([
            Finding("graph-break/unsupported-call", JOB, 24, "optimizer_step", 1),
            Finding("graph-break/other", JOB, 24, "optimizer_step", 1),
            Finding("recompile/python-scalar", "/venv/site-packages/torch/optim/adam.py", 214, "step", 1),
            Finding("recompile/dynamic-shape", "/venv/site-packages/transformers/utils/generic.py", 937, "wrapper", 1),
        ])
        summary = result.summary()
        self.assertEqual(summary["graph-break"], {"units": 2, "found": 1, "located": 2})
        self.assertEqual(summary["recompile"], {"units": 2, "found": 1, "located": 2})
        self.assertEqual((summary["findings"], summary["supported_findings"], summary["user_located_findings"],
                          summary["job_located_findings"]), (4, 2, 3, 2))
        kinds = sorted((item.kind, item.key) for item in result.disagreements if item.kind != "not-captured")
        self.assertEqual(kinds, [
            ("misclassified", "graph-break tests/validation/jobs/hf_llama_train_eval.py:24 torch-designed"),
            ("misclassified", "recompile transformers/utils/generic.py:937 grad-mode"),
            ("no-user-location", "recompile/python-scalar torch/optim/adam.py:214"),
            ("unsupported", "graph-break/other tests/validation/jobs/hf_llama_train_eval.py:24"),
            ("unsupported", "recompile/dynamic-shape transformers/utils/generic.py:937"),
        ])

    def test_a_recompile_may_be_reported_at_the_users_calling_line(self):
        result = self.score([Finding("recompile/python-scalar", JOB, 24, "optimizer_step", 1)])
        summary = result.summary()
        self.assertEqual(summary["recompile"], {"units": 2, "found": 1, "located": 1})
        self.assertEqual((summary["supported_findings"], summary["job_located_findings"]), (1, 1))
        self.assertFalse([item for item in result.disagreements if item.kind in ("unsupported", "no-user-location")])


if __name__ == "__main__":
    unittest.main()
