"""scripts/fuzz_campaign.py on a real fuzz target: the CPU budget, the merge, and a campaign killed midway."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.environ["TORCHSCOPE_SOURCE"], "scripts"))
import fuzz_campaign  # noqa: E402

SOURCE = os.environ["TORCHSCOPE_SOURCE"]
BUILD = os.environ["TORCHSCOPE_FUZZ_BUILD"]
DRIVER = os.path.join(SOURCE, "scripts", "fuzz_campaign.py")
TARGET = "cupti_buffer_fuzz"
CORPUS = os.path.join("collector", "cupti", "fuzz", "corpus")
POLL = 0.5
# What a budget may be overrun by: one poll interval of the fuzzer's CPU, and the tick granularity.
OVERRUN_S = 2 * POLL + 0.5


def fuzzers_writing_to(out):
    """Pids of the processes whose command line names the campaign folder (the fuzzers it started)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as source:
                    if f"-artifact_prefix={out}/".encode() in source.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


class FuzzCampaign(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="fuzz-campaign-")
        self.root = os.path.join(self.folder, "root")
        shutil.copytree(os.path.join(SOURCE, CORPUS), os.path.join(self.root, CORPUS))
        self.out = os.path.join(self.folder, "out")
        self.checkout_corpus = sorted(os.listdir(os.path.join(SOURCE, CORPUS)))

    def tearDown(self):
        for pid in fuzzers_writing_to(self.out):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.folder, ignore_errors=True)
        self.assertEqual(sorted(os.listdir(os.path.join(SOURCE, CORPUS))), self.checkout_corpus,
                         "the checkout's corpus changed")

    def command(self, cpu_seconds):
        return [sys.executable, DRIVER, "--build", BUILD, "--corpus-root", self.root, "--out", self.out,
                "--poll", str(POLL), "--cpu-seconds", str(cpu_seconds), TARGET]

    def progress(self):
        try:
            with open(os.path.join(self.out, "progress.json")) as source:
                return json.load(source)[TARGET]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            return None

    def results(self):
        with open(os.path.join(self.out, "results.jsonl")) as source:
            return [json.loads(line) for line in source]

    def test_the_budget_is_cpu_time_and_new_inputs_are_merged_into_the_corpus(self):
        corpus = os.path.join(self.root, CORPUS)
        before = len(os.listdir(corpus))
        finished = subprocess.run(self.command(3), capture_output=True, text=True, timeout=300)
        self.assertEqual(finished.returncode, 0, finished.stderr)
        (result,) = self.results()
        self.assertEqual(json.loads(finished.stdout), result)
        self.assertEqual(result["target"], TARGET)
        self.assertGreaterEqual(result["cpu_s"], 3)
        self.assertLess(result["cpu_s"], 3 + OVERRUN_S)
        self.assertEqual(result["segments"], 1)
        self.assertGreater(result["executions"], 0)
        self.assertGreater(result["cov"], 0)
        self.assertGreater(result["ft"], 0)
        self.assertEqual(result["findings"], [])
        self.assertEqual(len(os.listdir(corpus)), before + result["corpus_files_added"])
        self.assertTrue(self.progress()["done"])
        self.assertEqual(fuzzers_writing_to(self.out), [])

        again = subprocess.run(self.command(3), capture_output=True, text=True, timeout=60)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertIn(f"{TARGET} already done", again.stderr)
        self.assertEqual(again.stdout, "")
        self.assertEqual(len(self.results()), 1)

    def test_a_campaign_killed_midway_resumes_with_what_is_left_of_its_budget(self):
        budget = 6
        driver = subprocess.Popen(self.command(budget), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 240
        while (self.progress() or {}).get("cpu_s", 0) < 2:
            self.assertIsNone(driver.poll(), "the campaign ended before it was killed")
            self.assertLess(time.monotonic(), deadline, "the fuzzer never used 2 CPU-seconds")
            time.sleep(0.2)
        driver.kill()
        driver.wait()
        spent = self.progress()["cpu_s"]
        self.assertFalse(self.progress()["done"])
        deadline = time.monotonic() + 60
        while fuzzers_writing_to(self.out):  # they die with the campaign
            self.assertLess(time.monotonic(), deadline, "a fuzzer outlived its campaign")
            time.sleep(0.2)

        finished = subprocess.run(self.command(budget), capture_output=True, text=True, timeout=300)
        self.assertEqual(finished.returncode, 0, finished.stderr)
        (result,) = self.results()
        self.assertEqual(result["segments"], 2)
        self.assertGreaterEqual(result["cpu_s"], budget)
        self.assertLess(result["cpu_s"], budget + OVERRUN_S)
        self.assertGreater(result["cpu_s"], spent)
        with open(os.path.join(self.out, f"{TARGET}.log")) as log:
            text = log.read()
        self.assertIn("fuzz_campaign: segment 1: 6.0 CPU-s left of 6.0", text)
        self.assertIn(f"fuzz_campaign: segment 2: {budget - spent:.1f} CPU-s left of 6.0", text)
        # Executions add up over the segments: more than the second segment's own count.
        second = text.split("fuzz_campaign: segment 2")[1]
        last_of_second = [line for line in second.splitlines() if line.startswith("#") and " cov: " in line][-1]
        self.assertGreater(result["executions"], int(last_of_second[1:].split()[0].rstrip(":")))


class LogFigures(unittest.TestCase):
    def test_fork_mode_status_lines_and_segments_add_up(self):
        # Lines as libFuzzer writes them, a -fork=1 campaign (store_reader_fuzz) resumed once.
        log = (
            "fuzz_campaign: segment 1: 1800.0 CPU-s left of 1800.0, 2026-11-26 12:47:00\n"
            "INFO: -fork=1: fuzzing in separate process(s)\n"
            "#72: cov: 35561 ft: 35561 corp: 32 exec/s 36 oom/timeout/crash: 0/0/0 time: 4s job: 1 dft_time: 0\n"
            "#300263: cov: 54355 ft: 53843 corp: 633 exec/s 41 oom/timeout/crash: 0/0/0 time: 9678s job: 133\n"
            "fuzz_campaign: segment 2: 21.5 CPU-s left of 1800.0, 2026-11-26 15:40:00\n"
            "#1200: cov: 54360 ft: 53850 corp: 634 exec/s 40 oom/timeout/crash: 0/0/0 time: 30s job: 3\n"
        )
        self.assertEqual(fuzz_campaign.log_figures(log), (300263 + 1200, 54360, 53850))

    def test_in_process_status_lines(self):
        log = ("#2\tINITED cov: 10 ft: 12 corp: 1/1b exec/s: 0 rss: 30Mb\n"
               "#5646016\tREDUCE cov: 2634 ft: 15242 corp: 3061/6602Kb lim: 8192 exec/s: 577 rss: 697Mb L: 22/8192\n"
               "#5646167\tDONE   cov: 2634 ft: 15243 corp: 3061/6602Kb lim: 8192 exec/s: 577 rss: 697Mb\n"
               "Done 5646167 runs in 9790 second(s)\n")
        self.assertEqual(fuzz_campaign.log_figures(log), (5646167, 2634, 15243))


if __name__ == "__main__":
    unittest.main()
