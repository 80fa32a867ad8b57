"""The bridge's compiled-region timing (regions.py) without torch: sums per row, compiling calls kept apart,
frames attributed to the innermost running region, CPU time sampled with the wall time of the same calls, rows
after a fork, CUDA-graph requests."""

import time
import unittest

from torchscope_bridge import parse, regions


class Entry:
    def __init__(self, site=None):
        self.site = site


class RegionsTest(unittest.TestCase):
    def setUp(self):
        self.rows = []
        self.regions = regions.Regions(lambda kind, fields: self.rows.append((kind, fields)), lambda: False)

    def test_a_row_sums_the_calls_of_one_step(self):
        timed = self.regions.timed(lambda x: time.sleep(0.001) or x + 1, Entry(parse.Frame("t.py", 3, "f")), "f")
        self.assertEqual([timed(i) for i in range(10)], list(range(1, 11)))
        self.regions.write(0)
        (kind, row), = self.rows
        self.assertEqual(kind, "compiled_regions")
        args = row
        self.assertEqual((args["calls"], args["compile_calls"], args["step"]), (10, 0, 0))
        self.assertGreaterEqual(args["wall_ns"], 10 * 1_000_000)
        self.assertEqual(args["cpu_calls"], 2)  # calls 0 and 8
        self.assertEqual((args["site_file"], args["site_line"]), ("t.py", 3))
        self.assertLessEqual(row["start_ns"], row["end_ns"])
        self.regions.write(1)
        self.assertEqual(len(self.rows), 1)  # nothing ran since: no row

    def test_the_calls_whose_cpu_time_is_read_keep_their_own_wall_time(self):
        def work(i):
            if i == 0:  # a step's first call, the one read, is its slowest: 5 ms on the CPU
                end = time.thread_time_ns() + 5_000_000
                while time.thread_time_ns() < end:
                    pass
            else:
                time.sleep(0.001)
            return i

        timed = self.regions.timed(work, Entry(), "work")
        for i in range(4):
            timed(i)
        self.regions.write(0)
        args = self.rows[0][1]
        self.assertEqual(args["cpu_calls"], 1)
        self.assertGreaterEqual(args["cpu_ns"], 5_000_000)
        # One thread's CPU time within the wall time around its reads, which is that call's, not all four's.
        self.assertLessEqual(args["cpu_ns"], args["cpu_wall_ns"])
        self.assertLess(args["cpu_wall_ns"], args["wall_ns"])

    def test_a_call_that_compiles_is_counted_apart_and_its_frames_attributed(self):
        inner = self.regions.timed(lambda: self.regions.compiled(7), Entry(), "inner")

        def outer_body():
            self.regions.compiled(3)
            inner()

        outer = self.regions.timed(outer_body, Entry(), "outer")
        outer()
        outer_body_without_compiles = self.regions.timed(lambda: None, Entry(), "plain")
        outer_body_without_compiles()
        self.regions.write(-1)
        by_name = {row["name"]: row for _, row in self.rows}
        self.assertEqual(by_name["outer"]["frames"], [3])
        self.assertEqual(by_name["inner"]["frames"], [7])
        self.assertEqual(by_name["outer"]["compile_calls"], 1)
        self.assertEqual(by_name["outer"]["compile_wall_ns"], by_name["outer"]["wall_ns"])
        self.assertEqual(by_name["outer"]["cpu_calls"], 0)  # a compiling call's CPU time is compiling
        self.assertEqual(by_name["plain"]["compile_calls"], 0)

    def test_an_exception_still_counts_the_call(self):
        def fails():
            raise ValueError("job error")

        timed = self.regions.timed(fails, Entry(), "fails")
        with self.assertRaises(ValueError):
            timed()
        self.regions.write(0)
        self.assertEqual(self.rows[0][1]["calls"], 1)

    def test_calls_while_traced_are_not_counted(self):
        traced = regions.Regions(lambda kind, fields: self.rows.append(fields), lambda: True)
        timed = traced.timed(lambda: 5, Entry(), "traced")
        self.assertEqual(timed(), 5)
        traced.write(0)
        self.assertEqual(self.rows, [])

    def test_a_forked_child_starts_from_zero(self):
        timed = self.regions.timed(lambda: None, Entry(), "f")
        timed()
        self.regions.after_fork()
        self.regions.write(0)
        self.assertEqual(self.rows, [])

    def test_cuda_graph_requests(self):
        self.assertTrue(regions.asks_for_cudagraphs({"mode": "reduce-overhead"}))
        self.assertTrue(regions.asks_for_cudagraphs({"mode": "max-autotune"}))
        self.assertFalse(regions.asks_for_cudagraphs({"mode": "max-autotune-no-cudagraphs"}))
        self.assertFalse(regions.asks_for_cudagraphs({"mode": "reduce-overhead", "options": {"triton.cudagraphs": False}}))
        self.assertTrue(regions.asks_for_cudagraphs({"options": {"triton.cudagraphs": True}}))
        self.assertFalse(regions.asks_for_cudagraphs({}))

    def test_region_names(self):
        class Block:
            def forward(self):
                pass

            def _call_impl(self):
                pass

        def loss():
            pass

        block = Block()
        self.assertEqual(regions.region_name(None, block), "RegionsTest.test_region_names.<locals>.Block.forward")
        self.assertEqual(regions.region_name(None, loss), "RegionsTest.test_region_names.<locals>.loss")
        # module.compile() compiles the bound _call_impl; torchscope's torch-compile fix may compile forward.
        for bound in (block._call_impl, block.forward):
            self.assertEqual(regions.region_name(None, bound), "RegionsTest.test_region_names.<locals>.Block.forward")


class CudagraphSkipTest(unittest.TestCase):
    def test_a_skip_reason_is_a_column_of_the_compile(self):
        skipped = parse.compile_record({"cudagraph_skip_reason": "skipping cudagraphs due to mutated inputs"},
                                       {"frame_id": 2, "frame_compile_id": 0}, 0)
        self.assertEqual(skipped["cudagraph_skip_reason"], "skipping cudagraphs due to mutated inputs")
        for metrics in ({"cudagraph_skip_reason": None}, {}):
            self.assertEqual(parse.compile_record(metrics, {"frame_id": 2}, 0)["cudagraph_skip_reason"], "")

if __name__ == "__main__":
    unittest.main()
