"""Runtime fixes: patches applied to torch before the user's code uses it.

The collector's Python bridge (as soon as the job has imported torch: a Python process that never
does pays nothing) or torchscope_compiler.launch (before the script) calls apply() with the fix ids
from TORCHSCOPE_FIXES. Each entry is `id` or `id:arg`. apply() is idempotent: a fix applied
once is not applied again, so the bridge and the launcher may both call it.

Fix ids and their optional argument:
  dynamic-shapes                     torch.compile(..., dynamic=True) everywhere
  tensor-lr                          optimizers keep their learning rate in a 0-dim tensor
  capture-scalar-outputs             torch._dynamo.config.capture_scalar_outputs = True
  capture-dynamic-output-shape-ops   torch._dynamo.config.capture_dynamic_output_shape_ops = True
  compile-mode[:MODE]                torch.compile(..., mode=MODE); default reduce-overhead on CUDA,
                                     max-autotune-no-cudagraphs on CPU
  cuda-graphs                        compile-mode:reduce-overhead (CUDA only)
  cache-compile                      FX graph and AOTAutograd caches on
  tf32                               TF32 matmuls and convolutions (CUDA)
  bf16-autocast[:DEVICE]             bf16 autocast on for the whole job
  inference-mode                     the user's torch.no_grad() blocks run under torch.inference_mode()
  channels-last                      Conv2d weights and inputs in channels_last
  pin-memory                         DataLoader(pin_memory=True) when CUDA is available
  torch-compile                      the outermost nn.Modules the job calls are compiled
  quantize-dynamic[:SCHEME]          int8 quantization of each outermost module the job calls in eval mode,
                                     before its first call. SCHEME: torch.ao (the default: dynamic int8 of the
                                     nn.Linear and nn.LSTM layers, CPU only), int8-dynamic or int8-weight-only
                                     (torchao's quantize_ of the nn.Linear layers, CPU or CUDA); one that cannot
                                     be quantized or run so runs as it was, the reason on stderr
  eager                              compilation off: what torch.compile returns runs eagerly (Dynamo
                                     disabled), still timed per call as the compiled regions are
  test-change-results                (tests only, TORCHSCOPE_TEST_FIXES=1) scales every lr by 3 and every
                                     nn.Linear's output by 1.01 (an inference job's answers change)
"""

from __future__ import annotations

import os
import sys

from . import _settings

_applied: set[str] = set()


def traced_check():
    """A function that is True where torch.compile traces the calling code.

    Dynamo folds is_dynamo_compiling() to True in what it traces. torch.compiler.is_compiling() cannot
    serve: from torch 2.13 it reads a module-wide flag held for a whole compile, so a fix would skip the
    calls of every thread that runs while another one compiles.
    """
    import torch

    return getattr(torch.compiler, "is_dynamo_compiling", torch.compiler.is_compiling)


class DynamoSkip:
    """Keeps torch.compile from compiling a wrapper of nn.Module.__call__ as the module's frame.

    torch.compile(module) compiles the first frame under module.__call__ that lies outside torch's own files: the
    wrapper's, unless Dynamo skips it. One code object would then serve every compiled module: their guards and
    recompiles pile up in its one cache (ten modules hit the recompile limit of eight, and run eager) and the findings
    name the wrapper's line. The wrapper calls this at each call outside traced code until `done` (in traced code the
    call would break the graph): the skip is registered once Dynamo is loaded, without importing it (about 1 s) into a
    job that never compiles.
    """

    def __init__(self, wrapper) -> None:
        self._code = wrapper.__code__
        self.done = False

    def __call__(self) -> None:
        eval_frame = sys.modules.get("torch._dynamo.eval_frame")
        if eval_frame is None:
            return
        self.done = True
        skip_code = getattr(eval_frame, "skip_code", None)
        if skip_code is not None:
            skip_code(self._code)


def _torch_dir() -> str:
    import torch

    return os.path.dirname(torch.__file__)


def _patch_compile(**forced) -> None:
    import torch

    original = torch.compile

    def compile_with_fixes(model=None, **kwargs):
        kwargs.update(forced)
        if model is None:
            return original(**kwargs)
        return original(model, **kwargs)

    compile_with_fixes.__wrapped__ = original
    compile_with_fixes.__doc__ = original.__doc__
    torch.compile = compile_with_fixes


def _tensor_lr(scale: float = 1.0) -> None:
    import torch

    original = torch.optim.Optimizer.add_param_group

    def add_param_group(self, param_group):
        for holder in (param_group, self.defaults):
            lr = holder.get("lr")
            if isinstance(lr, (float, int)) and not isinstance(lr, bool):
                holder["lr"] = torch.tensor(float(lr) * scale)
        return original(self, param_group)

    torch.optim.Optimizer.add_param_group = add_param_group


def _scale_lr(scale: float) -> None:
    import torch

    original = torch.optim.Optimizer.add_param_group

    def add_param_group(self, param_group):
        lr = param_group.get("lr", self.defaults.get("lr"))
        if isinstance(lr, (float, int)):
            param_group["lr"] = float(lr) * scale
        return original(self, param_group)

    torch.optim.Optimizer.add_param_group = add_param_group


def _scale_linear_outputs(scale: float) -> None:
    import torch

    original = torch.nn.Linear.forward

    def forward(self, input):
        return original(self, input) * scale

    torch.nn.Linear.forward = forward


def _default_compile_mode() -> str:
    import torch

    return "reduce-overhead" if torch.cuda.is_available() else "max-autotune-no-cudagraphs"


def _tf32() -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")


_autocast_contexts: list = []


def _bf16_autocast(device: str) -> None:
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    context = torch.autocast(device_type=device, dtype=torch.bfloat16)
    context.__enter__()  # stays on for the job's lifetime (main thread)
    _autocast_contexts.append(context)


def _inference_mode() -> None:
    import torch

    torch_dir = _torch_dir()
    original = torch.no_grad
    traced = traced_check()

    class no_grad(original):  # noqa: N801 - keeps torch's public name
        """torch.no_grad that runs the user's own blocks under torch.inference_mode."""

        def __init__(self, *args, _from_user=None, **kwargs):
            super().__init__(*args, **kwargs)
            if _from_user is None:
                caller = sys._getframe(1).f_code.co_filename
                _from_user = not caller.startswith(torch_dir)
            self._from_user = _from_user
            self._inference = None

        def clone(self):
            return self.__class__(_from_user=self._from_user)

        def __enter__(self):
            if not self._from_user or traced():
                return super().__enter__()
            self._inference = torch.inference_mode()
            return self._inference.__enter__()

        def __exit__(self, *exc):
            if self._inference is None:
                return super().__exit__(*exc)
            inference, self._inference = self._inference, None
            return inference.__exit__(*exc)

    torch.no_grad = no_grad


def _channels_last() -> None:
    import torch

    original = torch.nn.Conv2d.forward
    traced = traced_check()

    def forward(self, input):
        if not traced():
            if not self.weight.is_contiguous(memory_format=torch.channels_last):
                self.weight.data = self.weight.data.contiguous(memory_format=torch.channels_last)
            if input.dim() == 4:
                input = input.contiguous(memory_format=torch.channels_last)
        return original(self, input)

    torch.nn.Conv2d.forward = forward


def _pin_memory() -> None:
    import torch
    import torch.utils.data

    if not torch.cuda.is_available():
        return  # pinning needs an accelerator; on CPU it only warns
    original = torch.utils.data.DataLoader.__init__

    def __init__(self, *args, **kwargs):
        kwargs["pin_memory"] = True
        original(self, *args, **kwargs)

    torch.utils.data.DataLoader.__init__ = __init__


def _compile_module(torch, module) -> None:
    """module.compile(), except for a module whose class is torch's own (nn.Sequential): Dynamo skips the frame
    of its `_call_impl` as torch's code and compiles nothing (torch 2.13), so its forward is compiled instead."""
    if type(module).__module__.startswith("torch."):
        object.__setattr__(module, "forward", torch.compile(module.forward))
    else:
        module.compile()


def _on_first_outermost_call(seen_attribute: str, act) -> None:
    """Calls act(torch, module, args, kwargs) once per module, on the first call of it that no other module's call
    encloses (outside code Dynamo traces)."""
    import torch

    original = torch.nn.Module.__call__
    traced = traced_check()
    state = {"depth": 0}

    def __call__(self, *args, **kwargs):
        if traced():
            return original(self, *args, **kwargs)
        if not skip.done:
            skip()
        if state["depth"] == 0 and not getattr(self, seen_attribute, False):
            object.__setattr__(self, seen_attribute, True)
            act(torch, self, args, kwargs)
        state["depth"] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            state["depth"] -= 1

    skip = DynamoSkip(__call__)
    torch.nn.Module.__call__ = __call__


def _torch_compile() -> None:
    """Compiles each outermost module the job calls that has parameters, on its first call."""

    def compile_it(torch, module, args, kwargs):
        if any(True for _ in module.parameters()) and getattr(module, "_compiled_call_impl", None) is None:
            _compile_module(torch, module)

    _on_first_outermost_call("_torchscope_seen", compile_it)


# quantize-dynamic's schemes: torch.ao's eager dynamic quantization, or a torchao quantize_ config (by class name).
QUANTIZE_SCHEMES = {
    "torch.ao": None,
    "int8-dynamic": "Int8DynamicActivationInt8WeightConfig",
    "int8-weight-only": "Int8WeightOnlyConfig",
}


def _quantize_dynamic(scheme: str) -> None:
    """Quantizes each outermost module with parameters that is in eval mode (quantization is for inference only) on
    its first call, with the scheme named (QUANTIZE_SCHEMES)."""
    scheme = scheme or "torch.ao"
    if scheme not in QUANTIZE_SCHEMES:
        raise ValueError(f"unknown quantization scheme '{scheme}' (one of {', '.join(QUANTIZE_SCHEMES)})")

    def quantize_it(torch, module, args, kwargs):
        if not module.training and any(True for _ in module.parameters()):
            _quantize_module(torch, module, args, kwargs, scheme)

    _on_first_outermost_call("_torchscope_quantize_seen", quantize_it)


# Fixes that could not act on this job, by id: the reason (the launcher reports them; `fix` says "not applicable").
not_applicable: dict[str, str] = {}


def _not_applicable(fix_id: str, reason: str) -> None:
    not_applicable.setdefault(fix_id, reason)
    print(f"torchscope: {fix_id} not applicable: {reason}", file=sys.stderr)


def _quantizer(torch, scheme: str, layers):
    """A function that quantizes a module in place with the scheme; ImportError with pip's advice when torchao is
    missing."""
    if QUANTIZE_SCHEMES[scheme] is None:
        return lambda module: torch.ao.quantization.quantize_dynamic(module, set(layers), dtype=torch.qint8,
                                                                     inplace=True)
    try:
        import torchao.quantization as torchao_quantization
    except Exception as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ImportError(f"torchao is not importable here ({first}): pip install torchao") from error
    config_class = getattr(torchao_quantization, QUANTIZE_SCHEMES[scheme])
    return lambda module: torchao_quantization.quantize_(module, config_class())


def _quantize_module(torch, module, args, kwargs, scheme: str) -> None:
    """Quantizes a copy first and calls it once with the call's own arguments: torch quantizes some models it cannot
    run (nn.TransformerEncoderLayer's fast-path check reads its Linear layers' weights, which a quantized Linear
    turns into a method); then the model runs as it was, with torch's reason."""
    import copy

    torch_ao = QUANTIZE_SCHEMES[scheme] is None
    # torchao's quantize_ takes nn.Linear layers only; torch.ao's dynamic quantization also nn.LSTM.
    layers = (torch.nn.Linear, torch.nn.LSTM) if torch_ao else (torch.nn.Linear,)
    names = " or ".join(f"nn.{layer.__name__}" for layer in layers)
    if not any(isinstance(layer, layers) for layer in module.modules()):
        _not_applicable("quantize-dynamic", f"{type(module).__name__} has no {names} layer")
        return
    if torch_ao and any(p.is_cuda for p in module.parameters()):
        _not_applicable("quantize-dynamic", "torch.ao's dynamic int8 quantization runs on the CPU; the model is on "
                                            "CUDA (quantize-dynamic:int8-weight-only is torchao's, for CUDA too)")
        return
    try:
        quantize = _quantizer(torch, scheme, layers)
    except ImportError as error:
        _not_applicable("quantize-dynamic", str(error))
        return
    try:
        trial = copy.deepcopy(module)
        quantize(trial)
        object.__setattr__(trial, "_torchscope_trial", True)  # no request of the job's (requests.py)
        with torch.no_grad():
            trial(*args, **kwargs)
    except Exception as error:  # torch's reason, and the model runs unquantized
        _not_applicable("quantize-dynamic", f"torch cannot run the quantized {type(module).__name__} ({scheme}): "
                                            f"{type(error).__name__}: {error}")
        return
    quantize(module)


def _cache_compile() -> None:
    import torch._inductor.config as inductor_config
    import torch._functorch.config as functorch_config

    inductor_config.fx_graph_cache = True
    if hasattr(functorch_config, "enable_autograd_cache"):
        functorch_config.enable_autograd_cache = True


def _apply_one(fix_id: str, arg: str) -> None:
    import torch

    if fix_id == "dynamic-shapes":
        _patch_compile(dynamic=True)
    elif fix_id == "tensor-lr":
        _tensor_lr()
    elif fix_id == "capture-scalar-outputs":
        torch._dynamo.config.capture_scalar_outputs = True
    elif fix_id == "capture-dynamic-output-shape-ops":
        torch._dynamo.config.capture_dynamic_output_shape_ops = True
    elif fix_id == "compile-mode":
        _patch_compile(mode=arg or _default_compile_mode())
    elif fix_id == "cuda-graphs":
        if torch.cuda.is_available():
            _patch_compile(mode="reduce-overhead")
    elif fix_id == "cache-compile":
        _cache_compile()
    elif fix_id == "tf32":
        _tf32()
    elif fix_id == "bf16-autocast":
        _bf16_autocast(arg)
    elif fix_id == "inference-mode":
        _inference_mode()
    elif fix_id == "channels-last":
        _channels_last()
    elif fix_id == "pin-memory":
        _pin_memory()
    elif fix_id == "torch-compile":
        _torch_compile()
    elif fix_id == "quantize-dynamic":
        _quantize_dynamic(arg)
    elif fix_id == "eager":
        # torch.compile still returns its wrapper (so the collector times the same regions), but Dynamo skips
        # every frame: the regions run eagerly, the baseline against which compilation is measured.
        torch._dynamo.config.disable = True
    elif fix_id == "test-change-results" and _settings.flag(_settings.TEST_FIXES):
        _scale_lr(3.0)
        _scale_linear_outputs(1.01)
    else:
        raise ValueError(f"unknown runtime fix '{fix_id}'")


RUNTIME_FIXES = (
    "dynamic-shapes", "tensor-lr", "capture-scalar-outputs", "capture-dynamic-output-shape-ops",
    "compile-mode", "cuda-graphs", "cache-compile", "tf32", "bf16-autocast", "inference-mode",
    "channels-last", "pin-memory", "torch-compile", "eager", "quantize-dynamic",
)


def parse(spec) -> list[tuple[str, str]]:
    """'a,b:x' or ['a', 'b:x'] -> [('a', ''), ('b', 'x')]."""
    entries = spec.split(",") if isinstance(spec, str) else list(spec)
    parsed = []
    for entry in entries:
        entry = entry.strip()
        if entry:
            fix_id, _, arg = entry.partition(":")
            parsed.append((fix_id.strip(), arg.strip()))
    return parsed


def apply(fix_ids) -> list[str]:
    """Applies the runtime fixes in fix_ids (a list or a comma-separated string).

    Source-only fix ids are ignored (they were applied to the files). Returns the ids applied by
    this call; an unknown id or a failing patch is reported on stderr and skipped, never raised,
    so the user's job always starts.
    """
    applied = []
    for fix_id, arg in parse(fix_ids):
        key = f"{fix_id}:{arg}"
        if key in _applied:
            continue
        if fix_id not in RUNTIME_FIXES and fix_id != "test-change-results":
            continue
        try:
            _apply_one(fix_id, arg)
        except Exception as error:  # the job must run even when a patch does not fit this torch
            print(f"torchscope: runtime fix '{fix_id}' not applied: {error}", file=sys.stderr)
            continue
        _applied.add(key)
        applied.append(fix_id)
    return applied


def apply_from_environment() -> list[str]:
    return apply(_settings.text(_settings.FIXES))


def on_torch_import() -> dict[str, str]:
    """The collector bridge's torch-import hook (TORCHSCOPE_TORCH_IMPORT_HOOKS, set by `torchscope fix`):
    applies TORCHSCOPE_FIXES in every traced interpreter of the job, its ranks and workers included, and
    names the fixes asked for as the store's `runtime_fixes` attribute."""
    apply_from_environment()
    asked = ",".join(fix_id for fix_id, _ in parse(_settings.text(_settings.FIXES)))
    return {"runtime_fixes": asked} if asked else {}
