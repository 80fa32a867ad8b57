"""Starts torchscope's Python bridge when the collector library is loaded in this interpreter.

The collector puts this directory first on PYTHONPATH, so this file shadows any sitecustomize
the environment already had; that one is run right after, as Python would have run it.
"""


def _start_bridge():
    try:
        import torchscope_bridge

        torchscope_bridge.start()
    except Exception:  # the job must run even when the bridge cannot
        pass


def _run_shadowed_sitecustomize():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    others = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    # Errors propagate as they would from the original: Python reports them the same way.
    spec.loader.exec_module(module)


_start_bridge()
_run_shadowed_sitecustomize()
