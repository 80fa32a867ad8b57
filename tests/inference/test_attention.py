"""Hand-written attention in a real scoring job: `torchscope advise` finds it at the user's softmax line from the
sampled stacks, and `torchscope fix --fixes sdpa` rewrites it into scaled_dot_product_attention in its copy, measures
the request latency and keeps the outputs within the fix's tolerance, leaving the user's file as it was."""

import json
import os
import subprocess
import sys
import unittest

from job_copy import BINARY, JobCopy


class HandWrittenAttention(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.copy = JobCopy("attention_scoring.py")
        cls.folder, cls.job, cls.original = cls.copy.folder, cls.copy.path, cls.copy.source
        cls.softmax_line = cls.copy.line_of("        weights = F.softmax(scores, dim=-1)")

    @classmethod
    def tearDownClass(cls):
        cls.copy.cleanup()

    def test_advise_finds_the_attention_and_fix_replaces_it_keeping_the_outputs(self):
        _, _, advice = self.copy.run_and_advise("run")
        attention = [f for f in advice["findings"] if f["rule"] == "attention/manual"]
        self.assertEqual(len(attention), 1, advice["findings"])
        self.assertEqual(attention[0]["location"]["file"], self.job)
        self.assertEqual(attention[0]["location"]["line"], self.softmax_line)
        self.assertEqual(attention[0]["fix"]["id"], "sdpa")
        self.assertEqual(attention[0]["fix"]["kind"], "source")

        report_path = os.path.join(self.folder.name, "fix.json")
        subprocess.run([BINARY, "fix", "--format", "json", "-o", report_path, "--repetitions", "2", "--fixes", "sdpa",
                        "--", sys.executable, self.job], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, cwd=self.folder.name)
        with open(report_path) as report_file:
            report = json.load(report_file)
        self.assertEqual(report["verdict_metric"], "request_p50_wall")
        fix = report["fixes"][0]
        # Named without lines, the fix took the profile run's finding.
        self.assertEqual(fix["id"], f"sdpa:{self.job}:{self.softmax_line}")
        self.assertIn("+        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask != 0, "
                      "scale=1 / math.sqrt(self.head_dim))", fix["diff"])
        self.assertIn("-        weights = F.softmax(scores, dim=-1)", fix["diff"])
        self.assertTrue(fix["measured"], fix)
        # SDPA sums in another order than matmul -> softmax -> matmul: close, not bit-exact.
        self.assertTrue(fix["parity"]["ok"], fix)
        self.assertEqual(fix["parity"]["basis"], "outputs")
        self.assertLess(fix["parity"]["max_rel_diff"], 1e-4)
        self.assertEqual(fix["parity"]["top1_agreement"], 1.0)
        self.assertIn("p99", fix["reason"])
        with open(self.job) as source:
            self.assertEqual(source.read(), self.original)  # no --write


if __name__ == "__main__":
    unittest.main()
