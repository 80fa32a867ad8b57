# A float learning rate changed by a scheduler around a compiled optimizer step: every new lr
# value is a new guard value, so the step recompiles (python-scalar). Prints what Dynamo counted:
# graphs, graph breaks, and compiles per code object (recompiles included).
# The compiled step runs no optimizer hooks: its compiled region ends each training step when it returns.
import json

import torch

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # MARK:optimizer
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)


@torch.compile  # MARK:frame (a decorated function starts at its decorator)
def optimizer_step():
    optimizer.step()  # MARK:step


for _ in range(3):
    optimizer.zero_grad()
    model(torch.ones(2, 4)).sum().backward()
    optimizer_step()
    scheduler.step()

counters = torch._dynamo.utils.counters
compiles = {}
for metrics in torch._dynamo.utils.get_compilation_metrics():
    compiles[metrics.co_name] = compiles.get(metrics.co_name, 0) + 1
print(json.dumps({
    "unique_graphs": counters["stats"]["unique_graphs"],
    "graph_breaks": sum(counters["graph_break"].values()),
    "compiles": compiles,
}, sort_keys=True))
