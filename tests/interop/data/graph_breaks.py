# Produces data/graph_breaks.log.gz, a TORCH_TRACE log with graph breaks and recompiles from a real
# torch.compile run (torch 2.13, CPU):
#   TORCH_TRACE=/tmp/logs python graph_breaks.py && gzip -9 -c /tmp/logs/*.log > graph_breaks.log.gz
import torch


def fn(x, scale):
    y = x.sin()
    if y.sum() > 0:   # data-dependent branch: graph break
        y = y * scale
    print("hi")
    return y.cos()


cfn = torch.compile(fn, backend="eager")
for n in (3, 4, 5):
    cfn(torch.ones(n), 0.5)
cfn(torch.ones(5), 0.25)
