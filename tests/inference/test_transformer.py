"""The transformer encoder's fast path on a real scoring job under `torchscope run`: torch's own reason for missing
it, at the user's line that calls the model, with the fix or the change it asks for; the Requests section says
whether it was taken; and the probe leaves the job's output as it was."""

import subprocess
import sys
import unittest

from job_copy import JobCopyTest

RULE = "inference/transformer-fast-path"


class ReviewScoring(JobCopyTest):
    JOB = "review_scoring.py"
    MODEL_CALL = "            scores = model(tokens)"

    def run_job(self, name, **env):
        """The job's printed output and advise's JSON report of its store."""
        _, output, advice = self.copy.run_and_advise(name, **env)
        return output, advice

    def fast_path(self, advice):
        return advice["runs"][0]["requests"].get("transformer_fast_path")

    def finding(self, advice):
        found = [finding for finding in advice["findings"] if finding["rule"] == RULE]
        self.assertLessEqual(len(found), 1)
        return found[0] if found else None

    def test_autograd_on_is_torchs_reason_and_inference_mode_the_fix(self):
        output, advice = self.run_job("autograd")
        plain = subprocess.run([sys.executable, self.job], check=True, capture_output=True, text=True,
                               cwd=self.copy.folder.name)
        self.assertEqual(output, plain.stdout)  # the probe changed nothing the job computes
        self.assertEqual(self.fast_path(advice)["layer_calls"], 3)  # three layers, one request watched
        self.assertEqual(self.fast_path(advice)["fast_path_calls"], 0)
        finding = self.finding(advice)
        self.assertIsNotNone(finding, [f["rule"] for f in advice["findings"]])
        self.assertEqual(finding["location"]["file"], self.job)
        self.assertEqual(finding["location"]["line"], self.model_call)
        self.assertTrue(finding["evidence"]["reason"].startswith("grad is enabled"), finding["evidence"])
        self.assertEqual(finding["fix"]["id"], "inference-mode")
        self.assertGreater(finding["evidence"]["layer_share"], 0.3)  # the encoder is most of a request
        self.assertGreater(finding["impact"]["seconds"], 0)

    def test_sequence_first_layers_are_told_to_be_batch_first(self):
        _, advice = self.run_job("seq_first", REVIEWS_SEQ_FIRST="1", REVIEWS_INFERENCE_MODE="1")
        finding = self.finding(advice)
        self.assertIsNotNone(finding)
        self.assertEqual(finding["evidence"]["reason"], "self_attn.batch_first was not True")
        self.assertIn("batch_first=True", finding["fix"]["summary"])
        self.assertFalse(finding["fix"]["id"])  # a change by hand

    def test_a_job_that_takes_it_hears_so_and_gets_no_finding(self):
        _, advice = self.run_job("inference_mode", REVIEWS_INFERENCE_MODE="1")
        self.assertIsNone(self.finding(advice))
        self.assertEqual(self.fast_path(advice), {"layer_calls": 3, "fast_path_calls": 3, "reason": None,
                                                  "layer_share": self.fast_path(advice)["layer_share"]})


if __name__ == "__main__":
    unittest.main()
