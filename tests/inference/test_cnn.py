"""Inference rules on a real CNN scoring job under `torchscope run`, which records no CPU ops: the op census of one
request stands in, so that vision/channels-last and inference/no-inference-mode fire at the user's line that calls
the model, and no-inference-mode stays silent once the loop runs under torch.no_grad()."""

import unittest

from job_copy import JobCopyTest


class CnnScoring(JobCopyTest):
    JOB = "cnn_classifier.py"
    MODEL_CALL = "        scores = model(images)"

    def findings(self, name, **env):
        _, _, advice = self.copy.run_and_advise(name, **env)
        return {finding["rule"]: finding for finding in advice["findings"]}

    def test_channels_last_and_inference_mode_are_found_at_the_model_call(self):
        found = self.findings("autograd")
        for rule in ("vision/channels-last", "inference/no-inference-mode"):
            self.assertIn(rule, found, list(found))
            self.assertEqual(found[rule]["location"]["file"], self.job)
            self.assertEqual(found[rule]["location"]["line"], self.model_call)
        convolutions = found["vision/channels-last"]["evidence"]["convolutions"]
        # Four convolutions a request, over the steady-state requests (the first requests warm up).
        self.assertEqual(convolutions % 4, 0)
        self.assertGreater(convolutions, 4 * 100)
        self.assertEqual(found["vision/channels-last"]["fix"]["id"], "channels-last")
        self.assertEqual(found["inference/no-inference-mode"]["fix"]["id"], "inference-mode")

    def test_a_loop_under_no_grad_is_not_told_to_leave_autograd(self):
        found = self.findings("no_grad", CNN_NO_GRAD="1")
        self.assertIn("vision/channels-last", found, list(found))
        self.assertNotIn("inference/no-inference-mode", found)


if __name__ == "__main__":
    unittest.main()
