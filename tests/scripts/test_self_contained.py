"""A clone runs its tests wherever it lies: nothing the build or the tests read points outside the repository.

The corpus of real logs and traces is in tests/corpus; a reference to a folder beside the clone (the workplace's
shared folder) would pass where that folder happens to exist and fail in every other clone.
"""

import os
import re
import subprocess
import unittest
from pathlib import Path

SOURCE = Path(os.environ["TORCHSCOPE_SOURCE"])
# What the build, the tests and the scripts read; the docs may speak of folders on a user's cluster.
CHECKED_SUFFIXES = {".txt", ".cmake", ".cpp", ".h", ".py", ".sh", ".json"}
# The folder's name is put together here so that this file is not one of the references it looks for.
BESIDE = "sha" + "red"
OUTSIDE = re.compile(rf"\.\./{BESIDE}\b|\b{BESIDE}/(corpus|reference|hooks)\b")


class SelfContainedTree(unittest.TestCase):
    def test_no_source_reads_a_folder_beside_the_clone(self):
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=SOURCE, check=True, capture_output=True).stdout
        offenders = []
        for name in tracked.decode().split("\0"):
            path = SOURCE / name
            if not name or path.suffix not in CHECKED_SUFFIXES or name.startswith("tests/corpus/"):
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if OUTSIDE.search(line):
                    offenders.append(f"{name}:{number}: {line.strip()}")
        self.assertEqual(offenders, [], "these read a folder outside the repository; use tests/corpus")

    def test_the_corpus_keeps_its_licences(self):
        corpus = SOURCE / "tests/corpus"
        for folder in ("torch_trace", "kineto"):
            self.assertTrue((corpus / folder / "LICENSE").is_file(), folder)
            self.assertTrue(any((corpus / folder).glob("*.*")), folder)


if __name__ == "__main__":
    unittest.main()
