# Records and allocates without pause until killed: a diagnostic through the bridge (copied into the
# store's queue under its lock), then Python objects large enough to come from malloc. A signal then
# lands, more often than in a real job, on a thread that holds the queue's lock or malloc's.
# Prints "ready" once recording. Never imports torch.
import torchscope_bridge

abi = torchscope_bridge._abi
message = "x" * 600
print("ready", flush=True)
while True:
    abi.diagnostic("info", message)
    junk = [bytearray(600 + 170 * i) for i in range(20)]
    del junk
