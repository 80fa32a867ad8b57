"""The bridge's step marking (torchscope_bridge.steps) on the sequences of calls training loops make."""

import unittest

from torchscope_bridge import steps


class StepsTest(unittest.TestCase):
    def setUp(self):
        self.recorded = []
        self.steps = steps.Steps(lambda index, start, end, source: self.recorded.append((index, source)))

    def test_backward_marks_steps_when_no_optimizer_is_used(self):
        for _ in range(4):
            self.steps.backward()
        self.assertEqual(self.recorded, [(0, b"backward"), (1, b"backward"), (2, b"backward")])

    def test_an_optimizer_loop_without_zero_grad_counts_as_before(self):
        # forward, backward, step: the first backward only started a step, which the optimizer does not inherit.
        for _ in range(4):
            self.steps.backward()
            self.steps.optimizer_stepped(1)
        self.assertEqual(self.recorded, [(0, b"optimizer"), (1, b"optimizer"), (2, b"optimizer")])

    def test_an_optimizer_loop_with_zero_grad_counts_as_before(self):
        for _ in range(3):
            self.steps.zero_grad(1)
            self.steps.backward()
            self.steps.optimizer_stepped(1)
        self.assertEqual(self.recorded, [(0, b"optimizer"), (1, b"optimizer"), (2, b"optimizer")])

    def test_backward_steps_of_a_warm_up_stay_and_the_optimizer_goes_on_from_them(self):
        for _ in range(3):
            self.steps.backward()
        for _ in range(3):
            self.steps.backward()
            self.steps.optimizer_stepped(1)
        self.assertEqual([index for index, _ in self.recorded], [0, 1, 2, 3, 4])
        self.assertEqual([source for _, source in self.recorded], [b"backward"] * 3 + [b"optimizer"] * 2)

    def test_markers_replace_backward(self):
        self.steps.marker()
        self.steps.backward()
        self.steps.marker()
        self.assertEqual(self.recorded, [(0, b"marker")])


if __name__ == "__main__":
    unittest.main()
