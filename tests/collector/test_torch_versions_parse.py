"""The bridge's parsers over the real structured traces of every torch release from 2.5 on; no torch needed.

Every event of each recorded log goes to the parser the in-process handler would hand it to, with the
metadata and payload torch gave the handler. The checks are the facts torch recorded about job.py:
each graph break names a marked line of the job (or no line, when torch named only its own frames),
every kind of break the job makes is found, the failing guards of the recompiles show every recompile
cause of the job, and each compile keeps its ids and stage times.
"""

import unittest

from torch_versions import RECOMPILE_EVIDENCE, recordings
from torchscope_bridge import parse


class GraphBreaksTest(unittest.TestCase):
    def test_each_break_names_its_type_and_the_users_line(self):
        for recording in recordings():
            with self.subTest(str(recording)):
                seen = set()
                for event in recording.of_kind("artifact:dynamo_graph_break_reason"):
                    fields = parse.graph_break(event.payload, recording.prefixes)
                    self.assertTrue(fields["break_type"], event.payload[:300])
                    self.assertNotIn("Encountered graph break", fields["break_type"])
                    traceback = event.payload.partition("User code traceback:")[2]
                    if recording.job not in traceback:
                        # torch named only its own frames: the parser must not pass one off as the user's.
                        self.assertEqual((fields["file"], fields["user_stack"]), ("", []), event.payload[:300])
                        continue
                    self.assertEqual(fields["file"], recording.job, event.payload[:300])
                    self.assertIn(fields["line"], recording.marked_lines("break-"), event.payload[:300])
                    self.assertEqual((fields["user_stack"][-1]["file"], fields["user_stack"][-1]["line"]),
                                     (fields["file"], fields["line"]))
                    seen.add(recording.markers[fields["line"]])
                if seen:
                    self.assertEqual(seen, recording.marker_kinds("break-"))


class RecompilesTest(unittest.TestCase):
    def test_failing_guards_show_every_recompile_cause_of_the_job(self):
        for recording in recordings():
            with self.subTest(str(recording)):
                guards = []
                for event in recording.of_kind("artifact:recompile_reasons"):
                    failures = parse.guard_failures(event.payload)
                    self.assertTrue(failures, event.payload)
                    for guard in failures:
                        self.assertNotIn("User stack trace:", guard)
                        self.assertRegex(guard, r"^\d+/\d+: ", "each guard names the cache entry it failed for")
                    guards.extend(failures)
                for kind in recording.marker_kinds("recompile-") & RECOMPILE_EVIDENCE.keys():
                    self.assertTrue(any(RECOMPILE_EVIDENCE[kind].search(guard) for guard in guards),
                                    f"{kind}: none of {len(guards)} failing guards shows it")


class CompilesTest(unittest.TestCase):
    def test_ids_code_and_stage_times(self):
        for recording in recordings():
            with self.subTest(str(recording)):
                inductor_compiles = 0
                for event in recording.of_kind("compilation_metrics"):
                    metadata = event.handler_metadata()
                    ids = {key: metadata.get(key) for key in ("frame_id", "frame_compile_id", "attempt")}
                    fields = parse.compile_record(metadata["compilation_metrics"], ids, 0)
                    self.assertEqual((fields["frame_id"], fields["frame_compile_id"], fields["attempt"]),
                                     (ids["frame_id"], ids["frame_compile_id"], ids["attempt"] or 0))
                    self.assertGreater(fields["start_ns"], 0)
                    self.assertGreaterEqual(fields["end_ns"], fields["start_ns"])
                    if fields["status"] == "failed":
                        self.assertTrue(fields["fail_reason"])
                        continue
                    self.assertTrue(fields["co_name"])
                    self.assertGreater(fields["dynamo_ns"], 0, fields["co_name"])
                    if fields["co_name"] == "normalize":
                        inductor_compiles += 1
                        self.assertGreater(fields["aot_ns"], 0)
                        self.assertGreaterEqual(fields["dynamo_ns"], fields["aot_ns"])
                        if recording.run == "cold":  # warm: from 2.7 on, a cache hit runs no Inductor
                            self.assertGreater(fields["inductor_ns"], 0)
                            self.assertGreaterEqual(fields["aot_ns"], fields["inductor_ns"])
                self.assertGreater(inductor_compiles, 0)

    def test_the_warm_run_hits_the_fx_graph_cache(self):
        for recording in recordings():
            with self.subTest(str(recording)):
                states = set(recording.fx_cache_states().values())
                self.assertEqual(states, {"hit"} if recording.run == "warm" else {"miss"})


if __name__ == "__main__":
    unittest.main()
