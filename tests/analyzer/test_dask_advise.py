"""`torchscope advise --dask` on a real Dask LocalCluster and on a scheduler with workers of its own: the same report
as `torchscope advise RUN_DIR` byte for byte (and the map and merge steps run by hand), a worker killed mid-run, a
damaged store and a store of another schema version reported per rank, workers without torchscope or with another
release refused, a scheduler that does not answer, and Dask missing.

Usage: python test_dask_advise.py TORCHSCOPE BENCH_RANKS (the built `torchscope` and `bench_ranks`, which writes the
synthetic run folder).
"""

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

TORCHSCOPE = BENCH_RANKS = None
RANKS, EVENTS = 12, 60000  # about 0.1 s to map each store here, so that a worker can be killed mid-run


def run(arguments, **options):
    return subprocess.run(arguments, capture_output=True, text=True, timeout=240, **options)


def children_of(pid):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rpartition(")")[2].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append((int(entry), command))
    return found


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class DaskAdvise(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="torchscope-dask-test-")
        cls.run_dir = os.path.join(cls.folder, "run")
        subprocess.run([BENCH_RANKS, "--build-only", cls.run_dir, str(RANKS), str(EVENTS)], check=True,
                       capture_output=True)
        cls.whole = run([TORCHSCOPE, "advise", cls.run_dir, "--format", "json"]).stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)

    def advise_dask(self, *arguments, env=None):
        return run([TORCHSCOPE, "advise", "--dask", *arguments], env=env)

    def test_the_local_cluster_gives_the_report_of_the_stores_byte_for_byte(self):
        done = self.advise_dask("--dask-workers", "2", self.run_dir, "--format", "json")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.whole)
        self.assertIn(f"mapped {RANKS} of {RANKS} stores on 2 Dask workers", done.stderr)

    def test_the_map_and_merge_steps_by_hand_give_the_report_of_the_stores_byte_for_byte(self):
        facts = os.path.join(self.folder, "facts")
        os.makedirs(facts, exist_ok=True)
        for name in sorted(os.listdir(self.run_dir)):
            done = run([TORCHSCOPE, "advise", "--rank-facts", os.path.join(self.run_dir, name), "-o",
                        os.path.join(facts, name + ".facts.json")])
            self.assertEqual(done.returncode, 0, done.stderr)
        merged = run([TORCHSCOPE, "advise", "--from-facts", facts, "--format", "json"])
        self.assertEqual(merged.returncode, 0, merged.stderr)
        self.assertEqual(merged.stdout, self.whole)

    def test_a_damaged_store_and_one_of_another_schema_are_reported_and_the_rest_merged(self):
        folder = os.path.join(self.folder, "faulty")
        shutil.copytree(self.run_dir, folder)
        with open(os.path.join(folder, "run.rank3.1003.db"), "r+b") as store:
            store.seek(100)
            store.write(b"\xff" * 4096)  # the first pages: SQLite's header and schema
        newer = sqlite3.connect(os.path.join(folder, "run.rank4.1004.db"))
        newer.execute("PRAGMA user_version = 999")
        newer.close()
        done = self.advise_dask("--dask-workers", "2", folder, "--format", "json")
        self.assertEqual(done.returncode, 0, done.stderr)
        import json
        report = json.loads(done.stdout)
        self.assertEqual(len(report["ranks"]["ranks"]), RANKS - 2)
        reasons = report["ranks"]["partial_reasons"]
        self.assertTrue(any(reason.startswith("rank 3 (run.rank3.1003.db) was not analysed") for reason in reasons),
                        reasons)
        self.assertTrue(any(reason.startswith("rank 4 (run.rank4.1004.db) was not analysed") and "schema v999" in reason
                            for reason in reasons), reasons)
        self.assertIn(f"the report covers {RANKS - 2} of the {RANKS} ranks", reasons)

    def test_a_worker_killed_mid_run_leaves_no_rank_unaccounted_for(self):
        # No retry on another worker: the tasks the killed worker held are reported, the others merged.
        env = dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0")
        driver = subprocess.Popen([TORCHSCOPE, "advise", "--dask", "--dask-workers", "2", self.run_dir, "--format",
                                   "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        killed = None
        for line in driver.stderr:
            if "mapped 1 of" in line:
                workers = [pid for pid, command in children_of(driver.pid) if "spawn_main" in command]
                self.assertTrue(workers, children_of(driver.pid))
                killed = workers[0]
                os.kill(killed, signal.SIGKILL)
                break
        out, rest = driver.communicate(timeout=240)
        self.assertEqual(driver.returncode, 0, rest)
        self.assertIsNotNone(killed)
        import json
        report = json.loads(out)
        analysed = {rank["rank"] for rank in report["ranks"]["ranks"]}
        reasons = report["ranks"]["partial_reasons"]
        named = {int(match.group(1)) for reason in reasons
                 for match in [re.match(r"rank (\d+) \(.*\) was not analysed: its worker died", reason)] if match}
        self.assertEqual(analysed | named, set(range(RANKS)), reasons)
        self.assertFalse(analysed & named)
        if named:
            self.assertIn(f"the report covers {len(analysed)} of the {RANKS} ranks", reasons)

    def test_a_scheduler_that_does_not_answer_fails_within_the_timeout(self):
        begin = time.monotonic()
        done = self.advise_dask(f"tcp://127.0.0.1:{free_port()}", "--dask-timeout", "3", self.run_dir)
        self.assertEqual(done.returncode, 1)
        self.assertIn("did not answer within 3 s", done.stderr)
        self.assertLess(time.monotonic() - begin, 30)

    def test_workers_without_torchscope_or_with_another_release_are_refused_with_what_to_install(self):
        port = free_port()
        address = f"tcp://127.0.0.1:{port}"
        dask = os.path.join(os.path.dirname(sys.executable), "dask")
        fake = os.path.join(self.folder, "fake-bin")
        os.makedirs(fake, exist_ok=True)
        with open(os.path.join(fake, "torchscope"), "w") as script:
            script.write("#!/bin/sh\necho torchscope 0.0.1\n")
        os.chmod(os.path.join(fake, "torchscope"), 0o755)
        bare_path = "/usr/bin:/bin"
        scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                      "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        workers = [subprocess.Popen([dask, "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                                    env=dict(os.environ, PATH=path), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) for path in (bare_path, fake + ":" + bare_path)]
        try:
            from distributed import Client
            with Client(address, timeout=60) as client:
                client.wait_for_workers(2, timeout=60)
            done = run([TORCHSCOPE, "advise", "--dask", address, "--dask-timeout", "60", self.run_dir])
            version = run([TORCHSCOPE, "--version"]).stdout.split()[-1]
            self.assertEqual(done.returncode, 1, done.stderr)
            self.assertIn("no torchscope on its PATH", done.stderr)
            self.assertIn("is torchscope 0.0.1", done.stderr)
            self.assertIn(f"pip install torchscope=={version}", done.stderr)
        finally:
            for process in [*workers, scheduler]:
                process.terminate()
                process.wait(timeout=60)

    def test_without_dask_the_option_says_how_to_install_it(self):
        bare = shutil.which("python3", path="/usr/bin:/bin")
        probe = run([bare, "-c", "import distributed"])
        if probe.returncode == 0:
            self.skipTest(f"{bare} has Dask")
        done = run([TORCHSCOPE, "advise", "--dask", self.run_dir], env=dict(os.environ, TORCHSCOPE_PYTHON=bare))
        self.assertEqual(done.returncode, 1)
        self.assertIn('pip install "torchscope[dask]"', done.stderr)


if __name__ == "__main__":
    TORCHSCOPE, BENCH_RANKS = sys.argv[1], sys.argv[2]
    unittest.main(argv=[sys.argv[0], "-v"])
