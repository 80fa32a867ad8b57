"""Markers a training script can call. They do nothing unless the job runs under torchscope.

    import torchscope
    for batch in loader:
        ...
        torchscope.step()   # one training step ends here

Once a script calls step(), its markers replace the steps torchscope detects from
optimizer.step().
"""

try:
    from torchscope_bridge.hooks import mark_step as _mark_step
except ImportError:  # not running under torchscope's collector
    _mark_step = None

__all__ = ["step"]


def step():
    """Marks the end of one training step (and the start of the next)."""
    if _mark_step is not None:
        _mark_step()
