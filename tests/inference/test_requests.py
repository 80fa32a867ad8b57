"""An inference job's requests under `torchscope run`: the steps are the model's calls, their latency agrees with
the job's own timing of each call, a serving loop's wait between requests is left out, and every report format
shows the figures."""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

from job_copy import JobCopy

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "jobs", "encoder_scoring.py")
BINARY = os.environ.get("TORCHSCOPE_TEST_BINARY", "torchscope")


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


class EncoderScoring(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.runs = {}
        for name, wait_ms in (("busy", "0"), ("waiting", "5")):
            store = os.path.join(cls.folder.name, f"{name}.db")
            times = os.path.join(cls.folder.name, f"{name}.json")
            environment = dict(os.environ, SCORING_TIMES=times, SCORING_WAIT_MS=wait_ms)
            subprocess.run([BINARY, "run", "-o", store, "--", sys.executable, JOB], check=True, env=environment,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cls.folder.name)
            advise = subprocess.run([BINARY, "advise", store, "--format", "json"], check=True, capture_output=True,
                                    text=True, cwd=cls.folder.name)
            with open(times) as timed:
                cls.runs[name] = (store, json.loads(advise.stdout)["runs"][0], json.load(timed))

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_requests_are_the_models_calls_with_their_batch_size(self):
        _, run, times = self.runs["busy"]
        requests = run["requests"]
        self.assertEqual(requests["requests"], len(times))
        # The first call is the warm-up; the op census's counted request and the one it ran in are left out too.
        self.assertGreaterEqual(requests["steady_requests"], len(times) - 3)
        self.assertLess(requests["steady_requests"], len(times))
        self.assertEqual(requests["items"], 16 * requests["steady_requests"])
        self.assertGreater(requests["latency_p99_seconds"], requests["latency_p50_seconds"])
        self.assertGreaterEqual(requests["latency_max_seconds"], requests["latency_p99_seconds"])

    def test_latency_agrees_with_the_jobs_own_timing(self):
        for name in ("busy", "waiting"):
            _, run, times = self.runs[name]
            truth_s = median(times[1:]) / 1e9
            measured_s = run["requests"]["latency_p50_seconds"]
            # The hooks sit just inside the job's own timer: within 10 % (and 0.3 ms) of the call it timed.
            self.assertLess(abs(measured_s - truth_s), max(0.1 * truth_s, 3e-4), f"{name}: {measured_s} vs {truth_s}")

    def test_a_serving_loop_reports_its_busy_time_not_its_wait(self):
        _, run, times = self.runs["waiting"]
        requests = run["requests"]
        # The calls torchscope counts: all but the warm-up and the census's (the slowest: timed op by op).
        counted = sorted(times[1:])[:requests["steady_requests"]]
        busy_truth_s = sum(counted) / 1e9
        self.assertLess(abs(requests["busy_seconds"] - busy_truth_s), 0.1 * busy_truth_s)
        self.assertGreater(requests["span_seconds"], busy_truth_s + 0.9 * 0.005 * (len(counted) - 1))
        self.assertAlmostEqual(requests["requests_per_second"], requests["steady_requests"] / requests["busy_seconds"])

    def test_every_report_shows_the_requests(self):
        store = self.runs["waiting"][0]
        for report_format, expected in (("text", "requests: latency p50"), ("markdown", "### Requests"),
                                        ("html", "<h3>Requests</h3>")):
            output = subprocess.run([BINARY, "advise", store, "--format", report_format], check=True,
                                    capture_output=True, text=True).stdout
            self.assertIn(expected, output, report_format)
            self.assertIn("went between requests", output, report_format)


class CensusOfARequest(unittest.TestCase):
    """The library answers a request at the end of the next one; the op census must still count the request it names,
    not the next one's ops against the previous one's time: on a job whose consecutive requests differ 100-fold
    (one item, then 512), and on a generation loop whose every request is longer than the one before."""

    def census_of(self, job):
        copy = JobCopy(job)
        self.addCleanup(copy.cleanup)
        store, _, advice = copy.run_and_advise(job[:-3])
        with sqlite3.connect(store) as db:
            census = db.execute("SELECT step, start_ns, step_ns, op_ns FROM op_census").fetchone()
            self.assertIsNotNone(census)
            row = db.execute("SELECT start_ns, end_ns - start_ns FROM steps WHERE step = ?", (census[0],)).fetchone()
        return census, row, advice

    def test_the_census_counts_the_request_it_names(self):
        for job in ("mixed_batches.py", "token_generator.py"):
            with self.subTest(job=job):
                (_, start_ns, step_ns, op_ns), (row_start_ns, row_ns), advice = self.census_of(job)
                self.assertEqual(start_ns, row_start_ns)
                self.assertLess(abs(step_ns - row_ns), 1_000_000)  # two clocks read at the request's end
                self.assertLessEqual(op_ns, step_ns)  # the ops timed ran inside that request
                for finding in advice["findings"]:
                    if finding["rule"] == "quantization/candidate":
                        self.assertLessEqual(finding["evidence"]["share_of_steady_steps"], 1.0)

if __name__ == "__main__":
    unittest.main()
