"""The bridge's leak evidence (torchscope_bridge.holders) on real tensors and real source files."""

import os
import sys
import tempfile
import textwrap
import types
import unittest

import torch

from torchscope_bridge import holders, memory, sites

_HERE = os.path.abspath(__file__)


def _marked_line(tag):
    with open(_HERE, encoding="utf-8") as source:
        return next(number for number, line in enumerate(source, 1) if line.rstrip().endswith(f"# MARK:{tag}"))


def _is_this_file(path):
    return os.path.abspath(path) == _HERE


def _leaky_loop(tracker, steps, keep):
    """Sums the loss as a tensor (keep="graph") or appends outputs to a list (keep="list")."""
    model = torch.nn.Linear(8, 1)
    total_loss = 0.0
    kept = []
    evidence = []
    for step in range(steps):
        loss = model(torch.randn(4, 8)).square().mean()
        loss.backward()
        if keep == "graph":
            total_loss += loss  # MARK:sum
        else:
            kept.append(loss)  # MARK:append
        if holders.is_sampled(step):
            evidence += tracker.sample(step, sys._getframe(), torch.Tensor)
    return evidence


class SampledSteps(unittest.TestCase):
    def test_powers_of_two_then_every_64th(self):
        sampled = [step for step in range(300) if holders.is_sampled(step)]
        self.assertEqual(sampled, [1, 2, 4, 8, 16, 32, 64, 128, 192, 256])

    def test_next_sampled_is_the_first_sampled_step_after(self):
        for step in range(-1, 300):
            following = next(later for later in range(step + 1, 400) if holders.is_sampled(later))
            self.assertEqual(holders.next_sampled(step), following, step)

    def test_past_step_64_the_next_sampled_step_is_half_a_second_of_steps_later(self):
        self.assertEqual(holders.next_sampled(64, 1_500_000), 448)  # 64 + 333 steps, rounded up to a 64th
        self.assertEqual(holders.next_sampled(64, 12_000_000), 128)  # 41 steps: the next 64th
        self.assertEqual(holders.next_sampled(8, 1_000), 16)  # the powers of two do not wait


class AddingLine(unittest.TestCase):
    def _file(self, source):
        handle = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
        handle.write(textwrap.dedent(source))
        handle.close()
        self.addCleanup(os.unlink, handle.name)
        return handle.name

    def test_the_augmented_assignment_inside_the_loop(self):
        path = self._file("""\
            def train(batches):
                total = 0
                for batch in batches:
                    total += batch
                return total
            """)
        self.assertEqual(holders.adding_line(path, 1, "train", "total"), 4)

    def test_an_append_to_an_attribute_in_another_method(self):
        path = self._file("""\
            class Trainer:
                def __init__(self):
                    self.history = []

                def log(self, output):
                    self.history.append(output)
            """)
        self.assertEqual(holders.adding_line(path, 2, "__init__", "self.history"), 6)

    def test_a_reassignment_that_reads_the_name(self):
        path = self._file("""\
            total = None
            for value in range(3):
                total = value if total is None else total + value
            """)
        self.assertEqual(holders.adding_line(path, 1, "<module>", "total"), 3)

    def test_none_when_nothing_adds_to_the_name(self):
        path = self._file("x = 1\n")
        self.assertIsNone(holders.adding_line(path, 1, "<module>", "y"))


class Holders(unittest.TestCase):
    def test_a_loss_summed_as_a_tensor_is_an_autograd_graph_that_grows(self):
        tracker = holders.Holders(_is_this_file, sites.stack_of)
        evidence = _leaky_loop(tracker, 9, "graph")
        self.assertTrue(evidence)
        found = evidence[-1]
        self.assertEqual((found["kind"], found["name"], found["function"]), ("autograd-graph", "total_loss", "_leaky_loop"))
        self.assertEqual(found["line"], _marked_line("sum"))
        self.assertLess(found["size_before"], found["size_after"])

    def test_a_list_of_outputs_is_a_container_that_grows(self):
        tracker = holders.Holders(_is_this_file, sites.stack_of)
        evidence = _leaky_loop(tracker, 9, "list")
        found = evidence[-1]
        self.assertEqual((found["kind"], found["name"]), ("container", "kept"))
        self.assertEqual(found["line"], _marked_line("append"))
        self.assertEqual((found["first_step"], found["step"]), (2, 8))
        self.assertEqual((found["size_before"], found["size_after"]), (3, 9))
        self.assertGreater(found["bytes"], 0)

    def test_a_loss_of_the_current_step_alone_is_not_evidence(self):
        tracker = holders.Holders(_is_this_file, sites.stack_of)
        model = torch.nn.Linear(8, 1)
        evidence = []
        for step in range(9):
            loss = model(torch.randn(4, 8)).square().mean()
            if holders.is_sampled(step):
                evidence += tracker.sample(step, sys._getframe(), torch.Tensor)
        self.assertEqual(evidence, [])


class CudaSeries(unittest.TestCase):
    def test_the_allocator_figures_map_to_the_documented_series(self):
        # The shape of torch.cuda.memory_stats_as_nested_dict(): figures by stat, pool and kind, and plain counts.
        pools = {"all": {"current": 10, "peak": 15, "allocated": 40, "freed": 30}, "large_pool": {"current": 8}}
        stats = {"allocated_bytes": pools, "reserved_bytes": {"all": {"current": 20}}, "num_alloc_retries": 1,
                 "num_device_alloc": 3, "inactive_split_bytes": {"all": 7}, "unrelated": 5}
        self.assertEqual(memory.cuda_values(stats), {"cuda.allocated": 10, "cuda.peak_allocated": 15,
                                                     "cuda.reserved": 20, "cuda.alloc_retries_count": 1,
                                                     "cuda.device_allocs_count": 3})

    def test_they_are_the_figures_torchs_memory_stats_gives_under_the_documented_keys(self):
        # torch.cuda.memory_stats() flattens memory_stats_as_nested_dict(): run torch's own code on a nested dict.
        figures = ("current", "peak", "allocated", "freed")
        nested = {stat: {pool: {figure: 100 * index + offset for offset, figure in enumerate(figures)}
                         for pool in ("all", "large_pool", "small_pool")}
                  for index, stat in enumerate(("allocated_bytes", "reserved_bytes", "inactive_split_bytes"))}
        nested.update(num_alloc_retries=7, num_ooms=8, num_device_alloc=9, num_device_free=10)
        cuda_memory = sys.modules["torch.cuda.memory"]
        original = cuda_memory.memory_stats_as_nested_dict
        cuda_memory.memory_stats_as_nested_dict = lambda device=None: nested
        try:
            flattened = torch.cuda.memory_stats()
        finally:
            cuda_memory.memory_stats_as_nested_dict = original
        self.assertEqual(memory.cuda_values(nested),
                         {series: flattened[key] for series, key in memory.CUDA_SERIES.items()})


class StepsWithWork(unittest.TestCase):
    """memory.Memory.due_from(): the steps whose end has work here, which the bridge names to the library so that
    other step ends make no Python call (steps.py)."""

    class Cuda:
        """torch.cuda's lazy initialisation: _lazy_call queues a call until CUDA is initialised, then calls it."""

        def __init__(self, initialised=False):
            self.queued, self.initialised = [], initialised

        def _lazy_call(self, callable_):
            if self.initialised:
                callable_()
            else:
                self.queued.append(callable_)

        def initialise(self):
            self.initialised = True
            for queued in self.queued:
                queued()  # torch fails the initialisation when a queued call raises

    def _memory(self, cuda, cuda_ready=lambda: None):
        torch_like = types.SimpleNamespace(cuda=cuda)
        return memory.Memory(abi=None, torch=torch_like, is_user_file=_is_this_file, stack_of=lambda frame: [],
                             cuda_ready=cuda_ready)

    def test_the_leak_evidences_next_step_until_cuda_is_initialised_then_every_step(self):
        cuda, told = self.Cuda(), []
        tracked = self._memory(cuda, lambda: told.append(True))
        self.assertEqual(tracked.due_from(), 1)
        cuda.initialise()
        self.assertEqual((tracked.due_from(), told), (0, [True]))

    def test_cuda_initialised_before_the_bridge_is_ready_at_once(self):
        self.assertEqual(self._memory(self.Cuda(initialised=True)).due_from(), 0)

    def test_a_callback_that_raises_does_not_fail_cudas_initialisation(self):
        cuda = self.Cuda()
        tracked = self._memory(cuda, lambda: 1 / 0)
        cuda.initialise()
        self.assertEqual(tracked.due_from(), 0)

    def test_a_torch_without_lazy_calls_counts_as_cuda_ready(self):
        self.assertEqual(self._memory(types.SimpleNamespace()).due_from(), 0)

    def _due_steps(self, step_ns, steps):
        """The steps whose end is followed up (as the library calls them: from due_from() on) in a CPU job."""
        cuda = self.Cuda()
        cuda._initialized = False  # torch.cuda's flag: not initialised
        tracked = memory.Memory(abi=None, torch=types.SimpleNamespace(cuda=cuda, Tensor=type("Tensor", (), {})),
                                is_user_file=_is_this_file, stack_of=lambda frame: [], cuda_ready=lambda: None)
        followed = []
        for step in range(steps):
            if step >= tracked.due_from():
                followed.append(step)
                tracked.step_ended(step, step * step_ns, sys._getframe())
        return followed

    def test_past_step_64_the_leak_evidence_waits_half_a_second_of_steps(self):
        # 1.5 ms steps: every 64th step would be ten samples a second, each about 80 us of the job's thread.
        self.assertEqual(self._due_steps(1_500_000, 1200), [1, 2, 4, 8, 16, 32, 64, 448, 832])
        self.assertEqual(self._due_steps(12_000_000, 300), [1, 2, 4, 8, 16, 32, 64, 128, 192, 256])

    def test_nothing_is_due_with_memory_capture_off(self):
        os.environ["TORCHSCOPE_MEMORY"] = "0"
        self.addCleanup(os.environ.pop, "TORCHSCOPE_MEMORY")
        self.assertGreater(self._memory(self.Cuda(initialised=True)).due_from(), 1 << 40)


if __name__ == "__main__":
    unittest.main()
