"""The bridge's op census (census.py) on real eager torch steps (CPU): one step counted after the warm-up, its
ops and the model's call line, each op credited to the user's line that issued it (a collate loop's lines, the
model's call, the backward, a loss module), nothing for a compiled job, a job's own dispatch mode left alone, off by
env."""

import os
import sys
import tempfile
import time
import unittest

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

from torchscope_bridge import census, parse, sites

_HERE = os.path.abspath(__file__)


def _marked_line(tag):
    with open(_HERE, encoding="utf-8") as source:
        return next(number for number, line in enumerate(source, 1) if line.rstrip().endswith(f"# MARK:{tag}"))


class Cells(torch.nn.Module):
    """Many small ops per step: an LSTM cell unrolled over 8 time steps."""

    def __init__(self):
        super().__init__()
        self.cell = torch.nn.LSTMCell(8, 8)

    def forward(self, x):
        state = None
        for t in range(x.shape[0]):
            state = self.cell(x[t], state)
        return state[0].sum()


def make_batch(size):
    """A batch built sample by sample in Python, as a collate loop does: 8 x 2 x 8 from `size` = 16 samples."""
    samples = []
    for _ in range(size):
        sample = torch.randn(8)  # MARK:sample
        samples.append(sample * 0.5)  # MARK:collate
    return torch.stack(samples).view(8, 2, 8)


class Raises(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2))

    def forward(self, x):
        x = x * self.weight
        raise ValueError("the job's own error")


class CensusTest(unittest.TestCase):
    def setUp(self):
        self.rows, self.diagnostics, self.compiled = [], [], False
        self.census = census.Census(torch, lambda kind, fields: self.rows.append((kind, fields)),
                                    lambda severity, message: self.diagnostics.append(message),
                                    lambda: self.compiled)
        self.model = Cells()
        self.x = torch.randn(8, 2, 8)

    def run_steps(self, count):
        start = time.monotonic_ns()
        for index in range(count):
            loss = self.model(self.x)  # MARK:model
            loss.backward()
            end = time.monotonic_ns()
            self.census.step_stored(index, start, end, sys._getframe())  # MARK:step
            start = end

    def test_one_step_is_counted_after_the_warm_up(self):
        self.run_steps(6)
        (kind, row), = self.rows
        args = row
        self.assertEqual(kind, "op_census")
        self.assertEqual(args["step"], census.PROFILED_AFTER)
        # 8 cells forward and backward: well over a hundred ops, most of them short.
        self.assertGreater(args["ops"], 100)
        self.assertGreater(args["short_ops"], args["ops"] // 2)
        self.assertLessEqual(args["short_ops"], args["ops"])
        self.assertLessEqual(args["short_op_ns"], args["op_ns"])
        self.assertEqual(sum(1 for _ in args["frequent_ops"]), 5)
        self.assertTrue(all(op["count"] >= 1 for op in args["frequent_ops"]))
        self.assertEqual((args["model"], args["model_file"], args["model_line"]), ("Cells", _HERE, _marked_line("model")))
        self.assertEqual((args["step_file"], args["step_line"]), (_HERE, _marked_line("step")))
        # The span covers the counted step and the census's work after it.
        self.assertLessEqual(row["start_ns"] + args["step_ns"], row["end_ns"])
        self.assertEqual(_get_current_dispatch_mode_stack(), [])
        self.assertEqual(self.diagnostics, [])

    def run_collate_steps(self, count):
        loss_of = torch.nn.MSELoss()
        start = time.monotonic_ns()
        for index in range(count):
            x = make_batch(16)
            loss = loss_of(self.model(x), torch.zeros(()))  # MARK:loss
            loss.backward()  # MARK:backward
            end = time.monotonic_ns()
            self.census.step_stored(index, start, end, sys._getframe())
            start = end

    def test_each_op_is_credited_to_the_line_that_issued_it(self):
        self.run_collate_steps(4)
        (_, row), = self.rows
        args = row
        sites = {(site["context"], site["line"]): site for site in args["sites"]}
        sample, collate = sites["outside", _marked_line("sample")], sites["outside", _marked_line("collate")]
        self.assertEqual((sample["file"], sample["function"], sample["via"]), (_HERE, "make_batch", ""))
        self.assertEqual([(op["name"], op["count"]) for op in sample["frequent_ops"]], [("aten::randn", 16)])
        self.assertEqual([(op["name"], op["count"]) for op in collate["frequent_ops"]], [("aten::mul.Tensor", 16)])
        # The model's ops at the line that called it, whatever line of its forward issued them; its backward at
        # the line that started it; a module without parameters (the loss) as its line's, through that module.
        model = sites["model", _marked_line("loss")]
        self.assertEqual(model["via"], "Cells")
        self.assertGreater(model["ops"], 50)
        self.assertGreater(sites["backward", _marked_line("backward")]["ops"], 50)
        loss = sites["outside", _marked_line("loss")]
        self.assertEqual(loss["via"], "torch.nn.modules.loss.MSELoss")
        self.assertIn("aten::mse_loss", [op["name"] for op in loss["frequent_ops"]])
        # Every op is in one site (fewer sites than the row keeps), the Python time between them too.
        self.assertLess(len(args["sites"]), census._SITES_KEPT)
        self.assertEqual(sum(site["ops"] for site in args["sites"]), args["ops"])
        self.assertEqual(sum(site["op_ns"] for site in args["sites"]), args["op_ns"])
        self.assertEqual(sum(site["short_ops"] for site in args["sites"]), args["short_ops"])
        self.assertTrue(all(site["gap_ns"] >= 0 for site in args["sites"]))
        self.assertLessEqual(sum(site["gap_ns"] + site["op_ns"] for site in args["sites"]), args["step_ns"])
        self.assertEqual([site["ops"] for site in args["sites"]],
                         sorted((site["ops"] for site in args["sites"]), reverse=True))

    def test_a_forward_that_raises_leaves_no_module_call_open(self):
        start = time.monotonic_ns()
        for index in range(census.PROFILED_AFTER + 1):
            try:
                Raises()(torch.ones(2))
            except ValueError:
                pass
            torch.ones(2) * 3  # MARK:after
            end = time.monotonic_ns()
            self.census.step_stored(index, start, end, sys._getframe())
            start = end
        (_, row), = self.rows
        contexts = {site["line"]: site["context"] for site in row["sites"]}
        self.assertEqual(contexts[_marked_line("after")], "outside")
        self.assertEqual(self.diagnostics, [])

    def test_a_library_generators_ops_go_to_the_line_that_resumed_it(self):
        with tempfile.TemporaryDirectory() as library:
            with open(os.path.join(library, "samples_source.py"), "w", encoding="utf-8") as source:
                source.write("import torch\n\ndef samples():\n    while True:\n        yield torch.ones(2) * 2\n")
            sys.path.insert(0, library)
            kept_scope = sites.scope
            sites.scope = parse.CodeScope([os.path.dirname(_HERE)], [library])
            try:
                import samples_source

                items = samples_source.samples()
                start = time.monotonic_ns()
                for index in range(census.PROFILED_AFTER + 1):
                    next(items)  # MARK:first
                    next(items)  # MARK:second
                    end = time.monotonic_ns()
                    self.census.step_stored(index, start, end, sys._getframe())
                    start = end
            finally:
                sites.scope = kept_scope
                sys.path.remove(library)
                sys.modules.pop("samples_source", None)
        (_, row), = self.rows
        ops = {site["line"]: (site["ops"], site["via"]) for site in row["sites"]}
        self.assertEqual(ops[_marked_line("first")], (2, "samples_source.samples"))
        self.assertEqual(ops[_marked_line("second")], (2, "samples_source.samples"))

    def test_a_compiled_job_gets_no_census(self):
        self.compiled = True
        self.run_steps(6)
        self.assertEqual(self.rows, [])
        self.assertEqual(_get_current_dispatch_mode_stack(), [])

    def test_a_job_that_compiles_during_the_counted_step_gets_none(self):
        self.run_steps(census.PROFILED_AFTER)
        self.compiled = True
        self.run_steps(2)
        self.assertEqual(self.rows, [])
        self.assertEqual(_get_current_dispatch_mode_stack(), [])

    def test_the_jobs_own_dispatch_mode_is_left_alone(self):
        class JobMode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        with JobMode() as mode:
            self.run_steps(6)
            self.assertEqual(_get_current_dispatch_mode_stack(), [mode])
        self.assertEqual(self.rows, [])

    def test_a_step_outside_the_window_restarts_the_count(self):
        self.run_steps(census.PROFILED_AFTER)
        self.census.skip()
        self.assertEqual(_get_current_dispatch_mode_stack(), [])
        self.run_steps(census.PROFILED_AFTER + 1)
        (_, row), = self.rows
        self.assertEqual(row["step"], census.PROFILED_AFTER)

    def test_off_by_environment(self):
        os.environ["TORCHSCOPE_CENSUS"] = "0"
        try:
            self.assertFalse(census.enabled())
        finally:
            del os.environ["TORCHSCOPE_CENSUS"]
        self.assertTrue(census.enabled())


if __name__ == "__main__":
    unittest.main()
