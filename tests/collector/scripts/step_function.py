# The bridge records steps through the collector's builtin (torchscope_step_function), not ctypes: calls it as the
# bridge does, with good and bad arguments, under TORCHSCOPE_WINDOW_STEPS=1:3. No torch needed.
import torchscope_bridge

step = torchscope_bridge._abi.step
print("kind", type(step).__name__)
print("outside", step(0, 100, 200, b"marker"))
print("inside", step(1, 200, 300, b"marker"), step(2, 300, 400, b"zero_grad"))
print("after", step(3, 400, 500, b"marker"))
print("bad", step("1", 1, 2, b"marker"), step(1, 2, 3), step(1, 2, 3, "marker"), step(2**70, 1, 2, b"marker"))
