"""The bridge hands GPU tracing over to a torch.profiler the job starts with CUDA activities (real torch, CPU)."""

import os
import unittest

import torch

from torchscope_bridge import hooks

_HERE = os.path.abspath(__file__)


def _marked_line(tag):
    with open(_HERE, encoding="utf-8") as source:
        return next(number for number, line in enumerate(source, 1) if line.rstrip().endswith(f"# MARK:{tag}"))


class RecordingAbi:
    def __init__(self):
        self.handovers = []

    def gpu_handover(self, reason):
        self.handovers.append(reason)
        return True


class ProfilerHandoverTest(unittest.TestCase):
    def setUp(self):
        self.abi = RecordingAbi()
        self.saved_abi, hooks._abi = hooks._abi, self.abi
        self.activity = torch._C._profiler.ProfilerActivity

    def tearDown(self):
        hooks._abi = self.saved_abi

    def test_only_a_profiler_of_cuda_activities_takes_cupti_and_the_message_names_the_users_line(self):
        class Profile:
            def __init__(self, activities):
                self.kineto_activities = activities

            def _prepare_trace(self):
                return "prepared"

        prepare = hooks._handing_gpu_over(Profile._prepare_trace, self.activity.CUDA)
        self.assertEqual(prepare(Profile({self.activity.CPU})), "prepared")
        self.assertEqual(self.abi.handovers, [])
        self.assertEqual(prepare(Profile({self.activity.CPU, self.activity.CUDA})), "prepared")  # MARK:start
        self.assertEqual(len(self.abi.handovers), 1)
        self.assertTrue(self.abi.handovers[0].startswith("the job started torch.profiler"), self.abi.handovers)
        if " at " in self.abi.handovers[0]:
            self.assertTrue(self.abi.handovers[0].endswith(f"{_HERE}:{_marked_line('start')}"), self.abi.handovers)

    def test_the_hooks_keep_torch_profiler_working(self):
        saved = {name: getattr(torch.autograd.profiler.profile, name) for name in ("_prepare_trace", "_start_trace")}
        try:
            hooks._hook_profiler(torch)
            self.assertIsNot(torch.autograd.profiler.profile._prepare_trace, saved["_prepare_trace"])
            with torch.profiler.profile(activities=[self.activity.CPU]) as profiler:
                torch.ones(4).sin().sum()
            self.assertTrue(any(event.key == "aten::sin" for event in profiler.key_averages()))
            with torch.autograd.profiler.profile() as legacy:
                torch.ones(4).cos()
            self.assertTrue(any(event.key == "aten::cos" for event in legacy.key_averages()))
            self.assertEqual(self.abi.handovers, [])  # CPU activities only: nothing to hand over
        finally:
            for name, original in saved.items():
                setattr(torch.autograd.profiler.profile, name, original)


if __name__ == "__main__":
    unittest.main()
