"""The source fixes, one module each: a module here defines FIX_ID and apply(module, target) -> module.

A new rewrite is a module beside these and one line in REWRITE_MODULES.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import libcst as cst

from .common import Target

REWRITE_MODULES = (
    "dynamic_shapes",
    "tensor_lr",
    "repeat_interleave",
    "item_accumulate",
    "tuple_keys",
    "print_out",
    "data_dependent_branch",
    "item_as_tensor",
    "sdpa",
)

Rewrite = Callable[[cst.Module, Target], cst.Module]


def _load() -> dict[str, Rewrite]:
    rewrites: dict[str, Rewrite] = {}
    for name in REWRITE_MODULES:
        module = importlib.import_module(f"{__package__}.{name}")
        rewrites[module.FIX_ID] = module.apply
    return rewrites


REWRITES = _load()
SOURCE_FIXES = tuple(REWRITES)
