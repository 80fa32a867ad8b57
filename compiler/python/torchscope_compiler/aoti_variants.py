"""Compiles one inference variant of an exported program into an AOTInductor package for `torchscope optimize`.

`python -m torchscope_compiler.aoti_variants PROGRAM VARIANT CACHE_DIR INPUTS` prints one JSON object: the package's
path, its size and the compile time, or `ok: false` with torch's reason (a variant that cannot be built is that
variant's result, not a failure of the command). Packages are cached under CACHE_DIR by a hash of the program's bytes,
the variant, the torch release and this file, and are written under a temporary name and renamed, so that an
interrupted compile never leaves a package that looks whole.
"""

import hashlib
import json
import os
import sys
import tempfile
import time

from torchscope_compiler.aoti_program import first_line, input_specs, load_program

VARIANTS = ("aoti", "aoti-max-autotune", "bf16", "channels-last", "int8")


def cache_key(program_path, variant):
    import torch

    digest = hashlib.sha256()
    with open(program_path, "rb") as program:
        for block in iter(lambda: program.read(1 << 20), b""):
            digest.update(block)
    with open(__file__, "rb") as source:
        digest.update(source.read())
    digest.update(f"{variant}\0{torch.__version__}".encode())
    return digest.hexdigest()[:24]


def dynamic_shapes(specs):
    import torch

    return tuple({dim: torch.export.Dim.DYNAMIC for dim in spec["dynamic"]} or None for spec in specs)


def reexport(module, args, specs):
    import torch

    return torch.export.export(module, tuple(args), dynamic_shapes=dynamic_shapes(specs), strict=False)


def int8_program(program, inputs, specs):
    """Dynamic int8 activations and weights for x86 (torchao's PT2E flow), calibrated on the seeded inputs."""
    try:
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
        from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
            X86InductorQuantizer, get_default_x86_inductor_quantization_config)
    except ImportError as error:
        raise VariantUnavailable(f"torchao is not importable here ({first_line(error)}): pip install torchao") from error
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_dynamic=True))
    prepared = prepare_pt2e(program.module(), quantizer)
    prepared(*inputs)
    return reexport(convert_pt2e(prepared), inputs, specs)


class VariantUnavailable(Exception):
    """The variant does not apply to this program: its reason is the result."""


def variant_program(variant, program, inputs, specs):
    """The exported program to compile, and the Inductor settings, for one variant."""
    import torch

    if variant == "aoti":
        return program, {}
    if variant == "aoti-max-autotune":
        # On a CPU, max-autotune benchmarks Inductor's C++ GEMM template against ATen for each matmul shape.
        return program, {"max_autotune": True, "max_autotune_gemm_backends": "CPP,ATEN"}
    if variant == "bf16":
        module = program.module().to(torch.bfloat16)
        cast = [t.to(torch.bfloat16) if t.is_floating_point() else t for t in inputs]
        return reexport(module, cast, specs), {}
    if variant == "channels-last":
        if not any(t.dim() == 4 for t in inputs):
            raise VariantUnavailable("the program has no 4-d input")
        module = program.module().to(memory_format=torch.channels_last)
        nhwc = [t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t for t in inputs]
        return reexport(module, nhwc, specs), {}
    if variant == "int8":
        return int8_program(program, inputs, specs), {"freezing": True}
    raise VariantUnavailable(f"unknown variant {variant} ({', '.join(VARIANTS)})")


def compile_variant(program_path, variant, cache_dir, inputs_path):
    import torch

    cache_dir = os.path.abspath(cache_dir)
    os.makedirs(cache_dir, exist_ok=True)
    key = cache_key(program_path, variant)
    package = os.path.join(cache_dir, f"{key}-{variant}.pt2")
    record = package + ".json"
    if os.path.exists(package) and os.path.exists(record):
        with open(record) as saved:
            return dict(json.load(saved), cached=True)
    program = load_program(program_path)
    inputs = torch.load(inputs_path)
    specs = input_specs(program)
    started = time.perf_counter()
    try:
        to_compile, settings = variant_program(variant, program, inputs, specs)
    except VariantUnavailable as reason:
        return {"ok": False, "reason": str(reason)}
    except Exception as error:
        return {"ok": False, "reason": f"export failed: {type(error).__name__}: {first_line(error)}"}
    handle, partial = tempfile.mkstemp(prefix=f".{key}-", suffix=".partial.pt2", dir=cache_dir)
    os.close(handle)
    try:
        torch._inductor.aoti_compile_and_package(to_compile, package_path=partial, inductor_configs=dict(settings))
        os.chmod(partial, 0o644)
        os.replace(partial, package)
    except Exception as error:
        return {"ok": False, "reason": f"AOTInductor failed: {type(error).__name__}: {first_line(error)}"}
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    result = {"ok": True, "package": package, "compile_s": time.perf_counter() - started,
              "bytes": os.path.getsize(package), "settings": settings}
    with open(record + ".partial", "w") as saved:
        json.dump(result, saved)
    os.replace(record + ".partial", record)
    return dict(result, cached=False)


if __name__ == "__main__":
    try:
        print(json.dumps(compile_variant(*sys.argv[1:5])))
    except Exception as error:
        print(json.dumps({"ok": False, "reason": f"{type(error).__name__}: {first_line(error)}"}))
