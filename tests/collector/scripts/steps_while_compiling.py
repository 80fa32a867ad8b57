# The main thread trains eagerly while another thread is inside torch.compile (its backend waits until
# the training is done): every optimizer step of the main thread happens during that compile.
import threading

import torch

compiling = threading.Event()
steps_done = threading.Event()


def waiting_backend(graph_module, example_inputs):
    compiling.set()
    steps_done.wait(timeout=60)
    return graph_module.forward


def worker():
    compiled = torch.compile(lambda x: x.sin() + 1, backend=waiting_backend)
    compiled(torch.randn(4))


thread = threading.Thread(target=worker)
thread.start()
compiling.wait(timeout=60)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    optimizer.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    optimizer.step()
print("compiling during the steps:", torch.compiler.is_compiling())
steps_done.set()
thread.join()
