"""Markers a training script can call. They do nothing unless the job runs under torchscope.

    import torchscope
    for batch in loader:
        ...
        torchscope.step()   # one training step ends here

Once a script calls step(), its markers replace the steps torchscope detects from
optimizer.step().

An inference job's steps are requests: each call of its outermost module with parameters, or,
once the script uses one, each block it marks as one request:

    with torchscope.request(items=len(batch)):
        scores = model(batch)
"""

import contextlib

try:
    from torchscope_bridge.hooks import mark_step as _mark_step
    from torchscope_bridge.hooks import request_ended as _request_ended
    from torchscope_bridge.hooks import request_started as _request_started
except ImportError:  # not running under torchscope's collector
    _mark_step = _request_started = _request_ended = None

__all__ = ["request", "step"]


def step():
    """Marks the end of one training step (and the start of the next)."""
    if _mark_step is not None:
        _mark_step()


@contextlib.contextmanager
def request(items=None):
    """Marks the block as one request of an inference job, of `items` items (its batch size)."""
    start_ns = _request_started() if _request_started is not None else None
    try:
        yield
    finally:
        if _request_ended is not None:
            _request_ended(start_ns, items)
