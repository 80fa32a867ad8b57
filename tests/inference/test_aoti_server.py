"""A C++ server of an AOTInductor package (samples/aoti_server, no Python at run time) under `torchscope run`: the
collector's libtorch plugin makes each run() call of the package a request, counts the operators of the third, and
leaves the server's output and exit code as they are (docs/collector.md, *Native programs with libtorch*)."""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

from job_copy import BINARY

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORT = os.path.join(HERE, "..", "..", "samples", "aoti_server", "export_ranker.py")
SERVER = os.environ.get("TORCHSCOPE_TEST_SERVER", "aoti_server")
BATCH_SIZES = (1, 16, 64)


def serve(*args):
    done = subprocess.run([SERVER, *args], check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


class AotiServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.package = os.path.join(cls.folder.name, "ranker.pt2")
        subprocess.run([sys.executable, EXPORT, cls.package], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def profile(self, name, *args):
        store = os.path.join(self.folder.name, f"{name}.db")
        sizes = ",".join(str(size) for size in BATCH_SIZES)
        done = subprocess.run([BINARY, "run", "-o", store, "--", SERVER, self.package, "--batch-sizes", sizes, *args],
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        return store, json.loads(done.stdout)

    def test_each_run_of_the_package_is_a_request_with_the_operators_of_one_counted(self):
        store, served = self.profile("run", "--requests", "60")
        alone = serve(self.package, "--batch-sizes", ",".join(map(str, BATCH_SIZES)), "--requests", "60")
        self.assertEqual(served["checksum"], alone["checksum"])  # the same scores with and without torchscope
        with sqlite3.connect(store) as db:
            steps = db.execute("SELECT step, end_ns - start_ns FROM steps WHERE source = 'request' ORDER BY step").fetchall()
            items = db.execute("SELECT value FROM run_attributes WHERE key = 'requests.items'").fetchone()[0]
            census = db.execute("SELECT step, step_ns, ops, op_ns, model, frequent_ops FROM op_census").fetchall()
        self.assertEqual([index for index, _ in steps], list(range(60)))
        # The server times its input's construction with each call: the requests are inside its own timing.
        request_ms = sum(ns for _, ns in steps) / 1e6
        self.assertLess(request_ms, served["total_ms"])
        self.assertGreater(request_ms, 0.3 * served["total_ms"])
        self.assertEqual(items, ",".join(f"{i}:{BATCH_SIZES[i % 3]}" for i in range(60)))
        self.assertEqual(len(census), 1)
        step, step_ns, ops, op_ns, model, frequent = census[0]
        self.assertEqual((step, model), (2, "torch::inductor::AOTIModelPackageLoader"))
        self.assertGreater(ops, 0)
        self.assertLess(op_ns, step_ns)
        self.assertIn("aten::copy_", [op["name"] for op in json.loads(frequent)])

        advice = json.loads(subprocess.run([BINARY, "advise", store, "--format", "json"], check=True,
                                           capture_output=True, text=True).stdout)
        requests = advice["runs"][0]["requests"]
        self.assertEqual(requests["requests"], 60)
        self.assertLessEqual(requests["latency_p50_seconds"], requests["latency_p99_seconds"])
        self.assertGreater(requests["latency_p50_seconds"], 0)

    def test_a_marked_block_is_one_request_and_the_package_call_inside_it_no_other(self):
        store, served = self.profile("marked", "--requests", "30", "--marker")
        with sqlite3.connect(store) as db:
            requests = db.execute("SELECT count(*) FROM steps WHERE source = 'request'").fetchone()[0]
            items = db.execute("SELECT value FROM run_attributes WHERE key = 'requests.items'").fetchone()[0]
            frequent = db.execute("SELECT frequent_ops FROM op_census").fetchone()[0]
        self.assertEqual(requests, 30)
        self.assertEqual(items, "0:-1")  # a marker has no tensor to take a batch size from
        # The block builds the input, then runs the package: both are the request's.
        self.assertIn("aten::randn", [op["name"] for op in json.loads(frequent)])
        self.assertEqual(served["requests"], 30)

    def test_the_packages_runner_called_directly_is_a_request_too(self):
        store, served = self.profile("runner", "--requests", "20", "--runner")
        through_loader = serve(self.package, "--batch-sizes", ",".join(map(str, BATCH_SIZES)), "--requests", "20")
        self.assertEqual(served["checksum"], through_loader["checksum"])
        with sqlite3.connect(store) as db:
            requests = db.execute("SELECT count(*) FROM steps WHERE source = 'request'").fetchone()[0]
            census = db.execute("SELECT step, model FROM op_census").fetchall()
        self.assertEqual(requests, 20)
        self.assertEqual(census, [(2, "torch::inductor::AOTIModelContainerRunner")])

    def test_a_server_that_fails_keeps_its_exit_code_and_message(self):
        store = os.path.join(self.folder.name, "missing.db")
        missing = os.path.join(self.folder.name, "missing.pt2")
        done = subprocess.run([BINARY, "run", "-o", store, "--", SERVER, missing], capture_output=True, text=True)
        alone = subprocess.run([SERVER, missing], capture_output=True, text=True)
        self.assertEqual((done.returncode, alone.returncode), (1, 1))
        self.assertIn("aoti_server:", done.stderr)


if __name__ == "__main__":
    unittest.main()
