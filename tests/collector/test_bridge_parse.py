"""The bridge's parsers on payloads as torch 2.13 (and 2.5) writes them; no torch needed."""

import unittest

from torchscope_bridge import parse

PREFIXES = ("/venv/lib/python3.11/site-packages/torch/",)

BREAK_2_13 = """Graph break in user code at /work/train.py:18
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Unsupported Tensor.item() call with capture_scalar_outputs=False
  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.
  Hint: Set `torch._dynamo.config.capture_scalar_outputs = True` to include these operations in the captured graph.

  Developer debug context: call_method TensorVariable() item () {}

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html

User code traceback:
  File "/work/train.py", line 30, in <module>
    model(x)
  File "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1775, in _call_impl
    return forward_call(*args, **kwargs)
  File "/work/train.py", line 18, in forward
    scale = y.sum().item()
"""

BREAK_IN_TORCH = """Graph break in user code at /venv/lib/python3.11/site-packages/torch/optim/optimizer.py:79
Graph Break Reason: Call to `torch._dynamo.graph_break()`
  Explanation: User-inserted graph break. Message: None
  Hint: Remove the `torch._dynamo.graph_break()` call.

User code traceback:
  File "/work/train.py", line 12, in step_fn
    optimizer.step()
  File "/venv/lib/python3.11/site-packages/torch/optim/optimizer.py", line 79, in _use_grad
    torch._dynamo.graph_break()
"""

BREAK_2_5 = """Graph break in user code at /work/train.py:7
Reason: Unsupported: generic_jump TensorVariable()
User code traceback:
  File "/work/train.py", line 7, in fn
    if x.sum() > 0:
"""


class GraphBreakTest(unittest.TestCase):
    def test_reads_type_explanation_hints_and_user_line(self):
        fields = parse.graph_break(BREAK_2_13, PREFIXES)
        self.assertEqual(fields["break_type"], "Unsupported Tensor.item() call with capture_scalar_outputs=False")
        self.assertEqual(fields["reason"], "call_method TensorVariable() item () {}")
        self.assertIn("does not support tracing `Tensor.item()`", fields["explanation"])
        self.assertEqual(len(fields["hints"]), 1)
        self.assertEqual((fields["file"], fields["line"], fields["function"]), ("/work/train.py", 18, "forward"))
        self.assertEqual([frame["line"] for frame in fields["user_stack"]], [30, 18])

    def test_a_break_inside_torch_points_at_the_users_call(self):
        fields = parse.graph_break(BREAK_IN_TORCH, PREFIXES)
        self.assertEqual((fields["file"], fields["line"], fields["function"]), ("/work/train.py", 12, "step_fn"))

    def test_reads_the_older_format(self):
        fields = parse.graph_break(BREAK_2_5, PREFIXES)
        self.assertEqual(fields["break_type"], "Unsupported: generic_jump TensorVariable()")
        self.assertEqual((fields["file"], fields["line"]), ("/work/train.py", 7))


class GuardFailuresTest(unittest.TestCase):
    def test_one_plain_reason_loses_its_code_comment_and_stack(self):
        payload = ("0/0: c == 1.5                                # return x * c  # work/f.py:18 in g\n"
                   "User stack trace:\n  File \"/work/f.py\", line 18, in g\n    return x * c")
        self.assertEqual(parse.guard_failures(payload), ["0/0: c == 1.5"])

    def test_a_json_list_keeps_every_reason(self):
        payload = '[\n"0/1: L[\'x\'].size()[0] == 3  # (f.py:2)",\n"0/0: tensor \'x\' size mismatch at index 0. expected 2, actual 4"\n]'
        self.assertEqual(parse.guard_failures(payload),
                         ["0/1: L['x'].size()[0] == 3", "0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4"])


class CompileRecordTest(unittest.TestCase):
    def test_times_and_counts(self):
        metrics = {"co_name": "f", "co_filename": "/work/f.py", "co_firstlineno": 3, "cache_size": 1,
                   "graph_op_count": 4, "graph_node_count": 6, "guard_count": 9, "start_time_us": 1_000,
                   "duration_us": 500, "dynamo_cumulative_compile_time_us": 500,
                   "aot_autograd_cumulative_compile_time_us": 400, "inductor_cumulative_compile_time_us": 300,
                   "fail_type": None, "restart_reasons": [], "has_guarded_code": True}
        fields = parse.compile_record(metrics, {"frame_id": 0, "frame_compile_id": 1, "attempt": 0}, 7, cache_hit=0)
        self.assertEqual((fields["start_ns"], fields["end_ns"]), (1_000_007, 1_500_007))
        self.assertEqual((fields["dynamo_ns"], fields["aot_ns"], fields["inductor_ns"]), (500_000, 400_000, 300_000))
        self.assertEqual((fields["graph_count"], fields["status"], fields["cache_hit"]), (1, "ok", 0))

    def test_older_second_based_times_and_a_failure(self):
        metrics = {"entire_frame_compile_time_s": 1.5, "backend_compile_time_s": 1.0, "start_time": 10.0,
                   "fail_type": "Unsupported", "fail_reason": "cache_size_limit reached"}
        fields = parse.compile_record(metrics, {}, 0)
        self.assertEqual(fields["dynamo_ns"], 1_500_000_000)
        self.assertEqual(fields["status"], "failed")
        self.assertEqual(fields["frame_id"], -1)

    def test_limit_warning_names_the_function(self):
        message = "torch._dynamo hit config.recompile_limit (8)\n   function: 'g' (/work/f.py:17)\n   last reason: ..."
        self.assertEqual(parse.limit_warning_site(message), ("g", "/work/f.py", 17))


if __name__ == "__main__":
    unittest.main()
