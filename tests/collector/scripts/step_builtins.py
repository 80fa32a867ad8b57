# The bridge marks steps through the collector's builtins (torchscope_step_builtins), not ctypes or Python code:
# calls them as the bridge does, with good and bad arguments, under TORCHSCOPE_WINDOW_STEPS=1:3. No torch needed.
import torchscope_bridge
from torchscope_bridge import steps

marks = steps.Marks(torchscope_bridge._abi.step_builtins)
print("kind", type(marks.marker).__name__)
print("first", marks.marker())  # only starts step 0
ended = [marks.marker() for _ in range(4)]  # steps 0 to 3, each followed up (the default)
print("indices", [step[0] for step in ended], "stored", [step[3] for step in ended])
print("contiguous", all(step[1] < step[2] == after[1] for step, after in zip(ended, ended[1:])))
marks.follow_up_from(6, True)
print("not due", marks.marker(), marks.marker(), "due", marks.marker()[0], "next", marks.next_step_index())
marks.follow_up_from(0, False)
print("outside the window", marks.marker())
print("no longer marking", marks.zero_grad(1), marks.backward())  # markers took over
print("bad", marks.optimizer_stepped("1"), marks.optimizer_stepped(), marks.zero_grad(2**70), marks.follow_up_from(1))
