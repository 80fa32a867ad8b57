"""The whole bridge over the real structured traces of every torch release from 2.5 on.

Each recorded log is replayed (replay_trace.py) into torch's structured-trace logger of a Python
running under the real collector library, so the bridge's TraceHandler receives the events as in a
live job and the collector writes a real store. The store must hold what torch reported: one compile
per `compilation_metrics` event with its ids, graph breaks whenever torch reported any (one per
break artifact) at a marked line of the job, one recompile per `recompile_reasons` artifact with its
guards and code object, and the FX cache hits and misses on the compiles torch reported them for.
Checks the bridge does not pass yet with a release are listed in torch_versions.KNOWN_GAPS.

TORCHSCOPE_REPLAY_LOG (a log file name of the manifest) restricts the test to one recording;
TORCHSCOPE_REPLAY_COLLECTOR names the library.
"""

import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from torch_versions import ROOT, check, recordings
from tracelog import compile_id

LIBRARY = os.environ.get("TORCHSCOPE_REPLAY_COLLECTOR",
                         str(ROOT / "build" / "dev" / "lib" / "libtorchscope_collector.so"))
REPLAY = Path(__file__).resolve().parent / "replay_trace.py"


def replay_into_store(recording, store):
    env = dict(os.environ, LD_PRELOAD=LIBRARY, TORCHSCOPE_OUTPUT=str(store), TORCHSCOPE_SUMMARY="0",
               TORCHSCOPE_BRIDGE_DIR=str(ROOT / "collector" / "python"))
    result = subprocess.run([sys.executable, str(REPLAY), str(recording.log), recording.torch_dir], env=env,
                            capture_output=True, text=True, timeout=240)
    if result.returncode != 0:
        raise AssertionError(f"replay failed ({result.returncode}):\n{result.stderr[-3000:]}")


def rows(store, sql):
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute(sql)]


def selected():
    only = os.environ.get("TORCHSCOPE_REPLAY_LOG")
    return [recording for recording in recordings() if not only or recording.log.name == only]


class ReplayTest(unittest.TestCase):
    def test_store_holds_what_torch_reported(self):
        self.assertTrue(Path(LIBRARY).exists(), f"no collector library at {LIBRARY}")
        cases = selected()
        self.assertTrue(cases, "no recording selected")
        for recording in cases:
            with self.subTest(str(recording)), tempfile.TemporaryDirectory() as scratch:
                store = Path(scratch) / "replay.db"
                replay_into_store(recording, store)
                self.check_compiles(recording, store)
                self.check_graph_breaks(recording, store)
                self.check_recompiles(recording, store)

    def check_compiles(self, recording, store):
        compiles = rows(store, "SELECT frame_id, frame_compile_id, attempt, co_name, dynamo_ns, cache_hit, status "
                               "FROM compiles ORDER BY id")
        expected = [(event.metadata.get("frame_id"), event.metadata.get("frame_compile_id"),
                     event.metadata.get("attempt") or 0) for event in recording.of_kind("compilation_metrics")]
        self.assertEqual([(row["frame_id"], row["frame_compile_id"], row["attempt"]) for row in compiles], expected)
        for row in compiles:
            if row["status"] != "failed":
                self.assertTrue(row["co_name"], row)
                self.assertGreater(row["dynamo_ns"], 0, row)

        def fx_cache_as_torch_reported():
            states = recording.fx_cache_states()
            for row in compiles:
                state = states.get((row["frame_id"], row["frame_compile_id"]))
                if state in ("hit", "miss"):
                    self.assertEqual(row["cache_hit"], int(state == "hit"), row)

        check(self, recording, "fx-cache", fx_cache_as_torch_reported)

    def check_graph_breaks(self, recording, store):
        breaks = rows(store, "SELECT file, line, break_type FROM graph_breaks ORDER BY id")
        artifacts = recording.of_kind("artifact:dynamo_graph_break_reason")
        if artifacts:
            self.assertEqual(len(breaks), len(artifacts))
        for row in breaks:
            self.assertTrue(row["break_type"], row)

        def breaks_found():
            self.assertTrue(breaks or not recording.reported_graph_breaks(), "torch reported graph breaks")

        def each_at_the_users_line():
            for row in breaks:
                self.assertEqual(row["file"], recording.job, row)
                self.assertIn(row["line"], recording.marked_lines("break-"), row)

        check(self, recording, "graph-breaks-found", breaks_found)
        check(self, recording, "break-user-line", each_at_the_users_line)

    def check_recompiles(self, recording, store):
        recompiles = rows(store, "SELECT frame_id, frame_compile_id, co_name, guard_failures, limit_hit "
                                 "FROM recompiles")
        artifacts = recording.of_kind("artifact:recompile_reasons")
        self.assertEqual(sorted((row["frame_id"], row["frame_compile_id"]) for row in recompiles),
                         sorted(compile_id(event.metadata) for event in artifacts))
        for row in recompiles:
            self.assertTrue(json.loads(row["guard_failures"]), row)
            self.assertTrue(row["co_name"], row)
        # Without torch's warning (not in the trace), the limit is known only from a failed compile.
        limit_failures = [event for event in recording.of_kind("compilation_metrics")
                          if re.search(r"recompile_limit|cache_size_limit",
                                       str(event.metadata["compilation_metrics"].get("fail_reason")))]
        if limit_failures:
            self.assertTrue(any(row["limit_hit"] == 1 for row in recompiles), "the limit failure was not noticed")


if __name__ == "__main__":
    unittest.main()
