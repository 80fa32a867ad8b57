"""The transformer encoder's fast-path probe (torchscope_bridge.fastpath) on real torch encoders: torch's own reason
read at the first request, the layers' share of it, and the probe out of the way of the job's own profiler."""

import cProfile
import sys
import unittest

import torch
from torch import nn

from torchscope_bridge import fastpath


def _encoder(batch_first=True, heads=4, layers=2):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, heads, dim_feedforward=64, batch_first=batch_first)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()


class Probe:
    def __init__(self):
        self.attributes = {}
        self.probe = fastpath.FastPathProbe(torch, self._record)

    def _record(self, table, fields):
        assert table == "run_attributes"
        self.attributes[fields["key"]] = fields["value"]

    def request(self, module, *inputs):
        self.probe.start(module)
        try:
            return module(*inputs)
        finally:
            self.probe.stop()


class FastPathProbeTest(unittest.TestCase):
    def test_a_batch_first_encoder_in_eval_without_grad_takes_it_in_every_layer(self):
        probe = Probe()
        with torch.no_grad():
            probe.request(_encoder(), torch.randn(4, 8, 32))
        self.assertEqual(probe.attributes[fastpath.LAYER_CALLS_ATTRIBUTE], "2")
        self.assertEqual(probe.attributes[fastpath.FAST_PATH_CALLS_ATTRIBUTE], "2")
        self.assertNotIn(fastpath.REASON_ATTRIBUTE, probe.attributes)
        share = float(probe.attributes[fastpath.LAYER_SHARE_ATTRIBUTE])
        self.assertGreater(share, 0.3)  # the encoder is all the request does
        self.assertLessEqual(share, 1.0)

    def test_torchs_own_reason_is_read_for_each_way_of_missing_it(self):
        cases = {
            "self_attn.batch_first was not True": (dict(batch_first=False), False, False),
            "training is enabled": ({}, True, False),
            "num_head is odd": (dict(heads=1), False, False),
            "grad is enabled and at least one of query or the input/output projection weights or biases "
            "requires_grad": ({}, False, True),
        }
        for reason, (options, training, grad) in cases.items():
            with self.subTest(reason=reason):
                probe = Probe()
                encoder = _encoder(**options).train(training)
                with torch.set_grad_enabled(grad):
                    probe.request(encoder, torch.randn(4, 8, 32))
                self.assertEqual(probe.attributes[fastpath.FAST_PATH_CALLS_ATTRIBUTE], "0")
                self.assertEqual(probe.attributes[fastpath.REASON_ATTRIBUTE], reason)
                self.assertIsNone(sys.getprofile())

    def test_only_the_first_request_is_watched_and_a_model_without_encoder_layers_is_not(self):
        probe = Probe()
        with torch.no_grad():
            probe.request(nn.Sequential(nn.Linear(4, 4)), torch.randn(2, 4))
            self.assertIsNone(sys.getprofile())
            probe.request(_encoder(), torch.randn(4, 8, 32))  # a later request: not watched
        self.assertEqual(probe.attributes, {})

    def test_a_compiled_model_is_skipped(self):
        probe = Probe()
        probe.probe.skip()
        with torch.no_grad():
            probe.request(_encoder(), torch.randn(4, 8, 32))
        self.assertEqual(probe.attributes, {})

    def test_the_jobs_own_profiler_is_left_alone_and_nothing_is_said(self):
        probe = Probe()
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            with torch.no_grad():
                probe.request(_encoder(), torch.randn(4, 8, 32))
            self.assertIsNotNone(sys.getprofile())
        finally:
            profiler.disable()
        self.assertEqual(probe.attributes, {})

    def test_a_request_that_raises_leaves_no_profile_function_behind(self):
        probe = Probe()
        with torch.no_grad(), self.assertRaises(RuntimeError):
            probe.request(_encoder(), torch.randn(4, 8, 31))  # not the model's width
        self.assertIsNone(sys.getprofile())

    def test_the_probe_gives_up_after_its_event_budget(self):
        probe = Probe()
        budget, fastpath.kEventBudget = fastpath.kEventBudget, 50
        try:
            with torch.no_grad():
                probe.request(_encoder(layers=4), torch.randn(4, 8, 32))
        finally:
            fastpath.kEventBudget = budget
        self.assertIsNone(sys.getprofile())
        self.assertLess(int(probe.attributes.get(fastpath.LAYER_CALLS_ATTRIBUTE, "0")), 4)


if __name__ == "__main__":
    unittest.main()
