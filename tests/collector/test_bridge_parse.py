"""The bridge's parsers on payloads as torch 2.13 (and 2.5) writes them; no torch needed."""

import json
import os
import tempfile
import textwrap
import types
import unittest

from torchscope_bridge import origins, parse, sites

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


# torch 2.13: a break torch could not resume after, inside a dict comprehension (its log wrapper around the reason).
BREAK_NOT_RESUMED = """Graph break in user code at /work/model.py:99
Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break encountered:

Reconstruction failure
  Explanation: Dynamo has no bytecode reconstruction implemented for sourceless variable DictItemsIterator().
  Hint: This graph break may have been caused by an earlier graph break. Resolving the earlier graph break may resolve this one.

  Developer debug context: DictItemsIterator()

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0092.html

Stack variable source attribution:
  NestedUserFunctionVariable() originated from:
  File "/work/model.py", line 99
                y = {k: e(xs[k]) for k, e in s.enc.items()}

User code traceback:
  File "/work/train.py", line 39, in train
    logits = compiled_model(batch)
  File "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1789, in _call_impl
    return forward_call(*args, **kwargs)
  File "/work/model.py", line 99, in forward
    y = {k: e(xs[k]) for k, e in s.enc.items()}

Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/torch/_dynamo/codegen.py", line 387, in __call__
    self.call_reconstruct(value)
torch._dynamo.exc.Unsupported: Reconstruction failure
"""

# torch 2.13: a frame torch skips after a break it cannot resume from.
BREAK_SKIPPING_THE_FRAME = """Graph break: torch.compile cannot properly resume from this graph break, which results in a skip.
torch.compile will skip tracing the frame step (/work/train.py line 12) and fall back to eager.
The graph break occurred in the following user code:
  File "/work/train.py", line 14, in step
    value = float(loss)

Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/torch/_dynamo/symbolic_convert.py", line 1076, in wrapper
    return inner_fn(self, inst)
torch._dynamo.exc.Unsupported: Unsupported Tensor.item() call with capture_scalar_outputs=False
  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.
  Hint: Set `torch._dynamo.config.capture_scalar_outputs = True` to include these operations in the captured graph.
"""


class BreakSitesTest(unittest.TestCase):
    SCOPE = parse.CodeScope(["/work"], ["/venv", "/venv/lib/python3.11/site-packages"])

    def test_torchs_wrapper_text_is_not_the_break_type(self):
        fields = parse.graph_break(BREAK_NOT_RESUMED, self.SCOPE)
        self.assertEqual(fields["break_type"], "Reconstruction failure")
        self.assertEqual(fields["gb_id"], "GB0092")
        self.assertEqual(fields["frame_skipped"], 1)
        self.assertEqual((fields["file"], fields["line"], fields["function"]), ("/work/model.py", 99, "forward"))
        # The stack is torch's user traceback with its library frames, not torch's own exception traceback.
        self.assertEqual([frame["line"] for frame in fields["stack"]], [39, 1789, 99])
        self.assertEqual([frame["line"] for frame in fields["user_stack"]], [39, 99])

    def test_a_skipped_frame_reads_its_reason_from_the_exception(self):
        fields = parse.graph_break(BREAK_SKIPPING_THE_FRAME, self.SCOPE)
        self.assertEqual(fields["break_type"], "Unsupported Tensor.item() call with capture_scalar_outputs=False")
        self.assertEqual(fields["frame_skipped"], 1)
        self.assertEqual((fields["file"], fields["line"], fields["function"]), ("/work/train.py", 14, "step"))

    def test_torchs_own_break_keeps_its_site_in_the_stack(self):
        fields = parse.graph_break(BREAK_IN_TORCH, self.SCOPE)
        self.assertEqual((fields["file"], fields["line"]), ("/work/train.py", 12))
        self.assertEqual(fields["stack"][-1], {"file": "/venv/lib/python3.11/site-packages/torch/optim/optimizer.py",
                                               "line": 79, "function": "_use_grad"})
        self.assertEqual(fields["gb_id"], "")
        self.assertEqual(fields["frame_skipped"], 0)

    def test_resume_functions_are_named_after_the_users_function(self):
        self.assertEqual(parse.function_name("torch_dynamo_resume_in_forward_at_41"), "forward")
        self.assertEqual(parse.function_name("forward"), "forward")


class CodeScopeTest(unittest.TestCase):
    def test_shared_cases_agree_with_the_store(self):
        path = os.path.join(os.path.dirname(__file__), "..", "store", "data", "user_code_cases.json")
        with open(path, encoding="utf-8") as cases:
            for case in json.load(cases)["cases"]:
                scope = parse.CodeScope(case["roots"]["user"], case["roots"]["library"])
                for file, expected in case["files"].items():
                    self.assertEqual(scope.is_user(file), expected, file)

    def test_prefixes_still_name_torchs_folder(self):
        scope = parse.scope_of(PREFIXES)
        self.assertFalse(scope.is_user("/venv/lib/python3.11/site-packages/torch/optim/adam.py"))
        self.assertTrue(scope.is_user("/work/train.py"))

    def test_code_generated_into_the_temporary_folder_is_not_the_users(self):
        # torch_geometric renders modules from templates right into /tmp (the RDL sample's SAGEConv); a project
        # checked out in a folder under /tmp (a CI clone) is still the user's, whatever the roots.
        torch = types.SimpleNamespace(__file__="/venv/lib/python3.11/site-packages/torch/__init__.py")
        scope = parse.CodeScope(["/work/job"], sites._library_roots(torch))
        self.assertFalse(scope.is_user("/tmp/torch_geometric.nn.conv.sage_conv_SAGEConv_propagate_ab12.py"))
        self.assertTrue(scope.is_user("/work/job/train.py"))
        self.assertTrue(scope.is_user("/tmp/ci/main/tests/collector/train.py"))

    def test_inductors_generated_code_is_not_the_users(self):
        saved = os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        try:
            default = sites._generated_code_roots()
            try:
                from torch._inductor.runtime import cache_dir_utils
            except ImportError:
                cache_dir_utils = None
            if cache_dir_utils is not None:
                self.assertEqual(default, [cache_dir_utils.default_cache_dir()])
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = "/work/job/cache"
            scope = parse.CodeScope(["/work/job"], sites._generated_code_roots())
            self.assertFalse(scope.is_user("/work/job/cache/kf/ckfyh2.py"))
            self.assertTrue(scope.is_user("/work/job/train.py"))
        finally:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
            if saved is not None:
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved


class GuardFailuresTest(unittest.TestCase):
    def test_one_plain_reason_loses_its_code_comment_and_stack(self):
        payload = ("0/0: c == 1.5                                # return x * c  # work/f.py:18 in g\n"
                   "User stack trace:\n  File \"/work/f.py\", line 18, in g\n    return x * c")
        self.assertEqual(parse.guard_failures(payload), ["0/0: c == 1.5"])

    def test_a_json_list_keeps_every_reason(self):
        payload = '[\n"0/1: L[\'x\'].size()[0] == 3  # (f.py:2)",\n"0/0: tensor \'x\' size mismatch at index 0. expected 2, actual 4"\n]'
        self.assertEqual(parse.guard_failures(payload),
                         ["0/1: L['x'].size()[0] == 3", "0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4"])


    def test_each_reason_keeps_where_torch_read_the_value(self):
        payload = ("7/0: s.calls == 0                     # s.calls += 1  # mp/cases.py:54 in forward (HINT: ...)\n"
                   "User stack trace:\n  File \"/work/cases.py\", line 54, in forward\n    s.calls += 1")
        reasons = parse.guard_reasons(payload)
        self.assertEqual(reasons[0]["guard"], "7/0: s.calls == 0")
        self.assertEqual([(frame.file, frame.line) for frame in reasons[0]["stack"]], [("/work/cases.py", 54)])

    def test_scalar_guards_and_their_sources(self):
        self.assertEqual(parse.scalar_guard("10/0: L['self'].param_groups[0]['lr'] == 0.01"),
                         "L['self'].param_groups[0]['lr']")
        self.assertEqual(parse.scalar_guard("1/3: c == -1.5e-05"), "c")
        self.assertEqual(parse.scalar_guard("0/0: G['flag'] == True"), "G['flag']")
        self.assertIsNone(parse.scalar_guard("0/0: len(xs) == 3"))
        self.assertIsNone(parse.scalar_guard("1/0: s._modules['d'].training == True"))
        self.assertIsNone(parse.scalar_guard("0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4"))
        self.assertEqual(parse.guarded_source("L['self'].param_groups[0]['lr']"), "self.param_groups[0]['lr']")
        self.assertEqual(parse.guarded_source("G['config'].steps"), "config.steps")


class ArgumentOriginTest(unittest.TestCase):
    SOURCE = textwrap.dedent("""\
        def train(compiled, loss, x):
            for step in range(3):
                scale = loss.item()
                compiled(x, scale)
                compiled(x, factor=loss.mean().item())
                other = 2.5
                compiled(x, other)
                compiled(x, float(step))
        """)

    def setUp(self):
        handle, self.path = tempfile.mkstemp(suffix=".py")
        with os.fdopen(handle, "w") as source:
            source.write(self.SOURCE)

    def tearDown(self):
        os.remove(self.path)

    def test_a_name_assigned_from_item_points_at_that_line(self):
        self.assertEqual(origins.argument_origin(self.path, 4, "scale", 1), ("item", 3))

    def test_an_item_call_in_the_argument_points_at_the_call(self):
        self.assertEqual(origins.argument_origin(self.path, 5, "factor"), ("item", 5))

    def test_other_numbers_point_at_the_call(self):
        self.assertEqual(origins.argument_origin(self.path, 7, "n", 1), ("argument", 7))
        self.assertEqual(origins.argument_origin(self.path, 8, "n", 1), ("argument", 8))

    def test_an_unreadable_caller_gives_nothing(self):
        self.assertIsNone(origins.argument_origin("/nonexistent/file.py", 3, "scale", 1))


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
