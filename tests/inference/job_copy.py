"""What the inference jobs' tests share: a job of jobs/ copied into a folder of its own (fixes edit and run the copy,
and the tests check the user's file is left as it was), its source, and the torchscope binary under test."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = os.environ.get("TORCHSCOPE_TEST_BINARY", "torchscope")


class JobCopy:
    def __init__(self, name):
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, name)
        shutil.copy(os.path.join(HERE, "jobs", name), self.path)
        with open(self.path) as source:
            self.source = source.read()

    def line_of(self, text):
        """The 1-based number of the line that reads exactly `text`."""
        return 1 + self.source.splitlines().index(text)

    def run_and_advise(self, name, **env):
        """The copy run under `torchscope run` into NAME.db in its folder (env added to the job's environment): the
        store's path, what the job printed and advise's JSON report of the store."""
        store = os.path.join(self.folder.name, f"{name}.db")
        job = subprocess.run([BINARY, "run", "-o", store, "--", sys.executable, self.path], check=True,
                             capture_output=True, text=True, cwd=self.folder.name, env={**os.environ, **env})
        advice = json.loads(subprocess.run([BINARY, "advise", store, "--format", "json"], check=True,
                                           capture_output=True, text=True).stdout)
        return store, job.stdout, advice

    def cleanup(self):
        self.folder.cleanup()


class JobCopyTest(unittest.TestCase):
    """Tests of one job of jobs/ (JOB), copied once for the class: `copy`, `job` (the copy's path) and `model_call`
    (the number of the line MODEL_CALL, the job's call of its model)."""

    JOB = ""
    MODEL_CALL = ""

    @classmethod
    def setUpClass(cls):
        cls.copy = JobCopy(cls.JOB)
        cls.job = cls.copy.path
        cls.model_call = cls.copy.line_of(cls.MODEL_CALL)

    @classmethod
    def tearDownClass(cls):
        cls.copy.cleanup()
