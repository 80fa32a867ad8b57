"""What the inference jobs' tests share: a job of jobs/ copied into a folder of its own (fixes edit and run the copy,
and the tests check the user's file is left as it was), its source, and the torchscope binary under test."""

import os
import shutil
import tempfile

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

    def cleanup(self):
        self.folder.cleanup()
