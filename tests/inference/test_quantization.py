"""quantization/candidate on real scoring jobs under `torchscope run`, from the op census of one request: a
Linear-heavy MLP ranker is told to quantize at the line that calls the model; an LSTM tagger (oneDNN's LSTM, which
dynamic int8 does not beat on the CPU) and a CNN are not."""

import unittest

from job_copy import JobCopy

RULE = "quantization/candidate"


def findings_of(copy, name):
    _, _, advice = copy.run_and_advise(name)
    return {finding["rule"]: finding for finding in advice["findings"]}


class QuantizationCandidate(unittest.TestCase):
    def test_a_linear_heavy_ranker_is_told_to_quantize_at_the_model_call(self):
        copy = JobCopy("ranking_mlp.py")
        self.addCleanup(copy.cleanup)
        found = findings_of(copy, "ranker")
        self.assertIn(RULE, found, list(found))
        finding = found[RULE]
        self.assertEqual(finding["location"]["file"], copy.path)
        self.assertEqual(finding["location"]["line"],
                         copy.line_of("            scores = ranker(user_ids, item_ids, features)"))
        self.assertEqual(finding["fix"]["id"], "quantize-dynamic")
        # Four Linear layers a request. Their share is of the requests, whatever the run's start-up weighs (about
        # 0.8 of the requests against 0.13 of the run on a quiet machine; the finding needs 0.3 of the requests).
        self.assertEqual(finding["evidence"]["calls"] % 4, 0)
        self.assertGreater(finding["evidence"]["share_of_steady_steps"], 2 * finding["evidence"]["share_of_run"])
        self.assertIn("steady-state requests", finding["message"])

    def test_an_lstm_tagger_and_a_cnn_are_not(self):
        for job in ("lstm_tagger.py", "cnn_classifier.py"):
            with self.subTest(job=job):
                copy = JobCopy(job)
                self.addCleanup(copy.cleanup)
                self.assertNotIn(RULE, findings_of(copy, job[:-3]))


if __name__ == "__main__":
    unittest.main()
