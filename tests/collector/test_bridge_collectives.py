"""The bridge's collective timing (torchscope_bridge.collectives) on a real one-rank gloo group: every completion
callback it adds to a future is counted until the backend's thread frees it, and the exit waits for that."""

import os
import tempfile
import threading
import unittest

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from torchscope_bridge import collectives

_rows = []
collectives.install(torch, lambda kind, fields: _rows.append((kind, fields)))


def setUpModule():
    store = dist.FileStore(os.path.join(tempfile.mkdtemp(), "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)


def tearDownModule():
    dist.destroy_process_group()


def _rows_named(name):
    return [fields for kind, fields in _rows if kind == "collectives" and fields["name"] == name]


class CountedCallbacks(unittest.TestCase):
    def test_a_callback_counts_until_the_thread_that_completes_the_future_frees_it(self):
        future = torch.futures.Future()
        seen = []
        collectives._then(future, lambda done: seen.append(done.value()))
        self.assertEqual(len(collectives._live_callbacks), 1)
        self.assertFalse(collectives._drain(limit_s=0.05))  # never completed: the wait gives up
        completer = threading.Thread(target=future.set_result, args=(7,))
        completer.start()
        completer.join()
        self.assertTrue(collectives._drain())
        self.assertEqual(seen, [7])
        self.assertEqual(len(collectives._live_callbacks), 0)

    def test_an_async_all_reduce_is_timed_and_its_callback_drained(self):
        before = len(_rows_named("all_reduce"))
        tensor = torch.ones(1 << 20)
        work = dist.all_reduce(tensor, async_op=True)
        self.assertTrue(collectives._drain())  # gloo's thread ran the callback and freed it
        work.wait()
        rows = _rows_named("all_reduce")
        self.assertEqual(len(rows), before + 1)
        self.assertTrue(rows[-1]["async"])
        self.assertEqual(rows[-1]["bytes"], tensor.numel() * 4)
        self.assertGreaterEqual(rows[-1]["end_ns"], rows[-1]["start_ns"])

    def test_ddp_buckets_are_timed_with_the_default_average_and_no_callback_left(self):
        torch.manual_seed(0)
        reference = torch.nn.Linear(16, 4)
        model = DistributedDataParallel(torch.nn.Linear(16, 4))
        model.module.load_state_dict(reference.state_dict())
        inputs = torch.randn(8, 16)
        reference(inputs).square().mean().backward()
        model(inputs).square().mean().backward()
        self.assertTrue(collectives._drain())
        buckets = _rows_named("ddp:allreduce")
        self.assertGreaterEqual(len(buckets), 1)
        self.assertEqual(buckets[-1]["source"], "ddp")
        # One rank: the average is the gradient itself, as DDP's own all-reduce gives.
        for ours, theirs in zip(model.module.parameters(), reference.parameters()):
            torch.testing.assert_close(ours.grad, theirs.grad)


if __name__ == "__main__":
    unittest.main()
