"""What `torchscope optimize` reads from a .pt2 and the inputs it measures it on.

`describe` tells the kind of a model file (exported program, AOTInductor package, TorchScript) from its zip
entries without importing torch; `prepare` loads an exported program, checks the input shapes against it and
writes seeded inputs and the eager outputs they give (torch.save, read by torchscope-optimize with libtorch).
Every failure is one line on stderr and exit 2 (the user's file or shapes) or 1 (torch failed).
"""

import json
import sys
import zipfile


class UsageError(Exception):
    """The user's file or shapes are wrong: exit 2."""


def model_kind(path):
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return "aoti_shared_library" if is_aoti_shared_library(path) else "unknown"
    if any(name.endswith("/models/model.json") for name in names):
        return "exported_program"
    if any("/data/aotinductor/" in name for name in names):
        return "aoti_package"
    if any(name.endswith("/data.pkl") for name in names) and any("/code/" in name for name in names):
        return "torchscript"
    return "unknown"


def is_aoti_shared_library(path):
    """A model .so of torch._export.aot_compile (torch 2.3-2.5): an ELF file exporting AOTInductor's C ABI."""
    try:
        with open(path, "rb") as library:
            return library.read(4) == b"\x7fELF" and b"AOTInductorModelContainerCreate" in library.read(1 << 28)
    except OSError:
        return False


def saved_torch_version(path):
    with zipfile.ZipFile(path) as archive:
        name = next(n for n in archive.namelist() if n.endswith("/models/model.json"))
        return json.loads(archive.read(name)).get("torch_version", "")


def load_program(path):
    import torch

    try:
        return torch.export.load(path)
    except Exception as error:  # torch raises many kinds here: the reason is told, whatever it is
        saved = saved_torch_version(path)
        if saved and saved != torch.__version__:
            raise UsageError(f"'{path}' was saved by torch {saved} and this torch ({torch.__version__}) cannot "
                             f"load it ({first_line(error)}): export it again with torch {torch.__version__}")
        raise UsageError(f"cannot load '{path}' as an exported program: {first_line(error)}")


def first_line(error):
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


def input_specs(program):
    """One {shape, dtype, dynamic} per tensor the program takes, from its placeholders' example values."""
    import torch

    user_inputs = [spec.arg.name for spec in program.graph_signature.input_specs
                   if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    nodes = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    specs = []
    for name in user_inputs:
        value = nodes[name].meta.get("val")
        if not isinstance(value, torch.Tensor):
            raise UsageError(f"the program's input '{name}' is not a tensor: optimize measures programs of tensor inputs")
        shape, dynamic = [], []
        for dim, size in enumerate(value.shape):
            if isinstance(size, torch.SymInt):
                dynamic.append(dim)
                hint = size.node.hint if size.node.hint is not None else 2
                shape.append(int(hint))
            else:
                shape.append(int(size))
        specs.append({"name": name, "shape": shape, "dtype": str(value.dtype).replace("torch.", ""), "dynamic": dynamic})
    return specs


def example_shapes(program, specs):
    """The shapes of the inputs the program was exported with, where it keeps them."""
    example = getattr(program, "example_inputs", None)
    if example:
        args, _ = example
        tensors = [a for a in args if hasattr(a, "shape")]
        if len(tensors) == len(specs):
            return [list(t.shape) for t in tensors]
    return [spec["shape"] for spec in specs]


def check_shapes(specs, shapes):
    if len(shapes) != len(specs):
        raise UsageError(f"the program takes {len(specs)} input(s) and {len(shapes)} --input shape(s) were given")
    for spec, shape in zip(specs, shapes):
        expected = "x".join("N" if d in spec["dynamic"] else str(s) for d, s in enumerate(spec["shape"]))
        fits = len(shape) == len(spec["shape"]) and all(
            d in spec["dynamic"] or s == e for d, (s, e) in enumerate(zip(shape, spec["shape"])))
        if not fits:
            given = "x".join(str(s) for s in shape)
            raise UsageError(f"input '{spec['name']}' of the program has shape {expected} ({spec['dtype']}), "
                             f"not {given}")


def seeded_inputs(specs, shapes, seed, program):
    import torch

    generator = torch.Generator().manual_seed(seed)
    example = getattr(program, "example_inputs", None)
    example_args = [a for a in example[0] if hasattr(a, "shape")] if example else []
    inputs = []
    for index, (spec, shape) in enumerate(zip(specs, shapes)):
        dtype = getattr(torch, spec["dtype"])
        if dtype.is_floating_point:
            inputs.append(torch.randn(shape, generator=generator).to(dtype))
        elif dtype == torch.bool:
            inputs.append(torch.rand(shape, generator=generator) < 0.5)
        else:
            # Integer inputs are indices (tokens, ids): drawn below the largest the example holds.
            high = int(example_args[index].max()) + 1 if index < len(example_args) and example_args[index].numel() else 2
            inputs.append(torch.randint(0, max(high, 1), shape, generator=generator, dtype=dtype))
    return inputs


def flat_outputs(value):
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in flat_outputs(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in flat_outputs(item)]
    return []


def write_raw(tensors, stem):
    """STEM.json lists dtype, shape and byte offset of each tensor in STEM.bin (C-contiguous), for libtorch to read."""
    entries, offset = [], 0
    with open(f"{stem}.bin", "wb") as data:
        for tensor in tensors:
            raw = tensor.contiguous().view(-1).view(dtype=__import__("torch").uint8).numpy().tobytes()
            data.write(raw)
            entries.append({"dtype": str(tensor.dtype).replace("torch.", ""), "shape": list(tensor.shape), "offset": offset})
            offset += len(raw)
    with open(f"{stem}.json", "w") as index:
        json.dump(entries, index)


def prepare(path, shapes, seed, out_dir):
    import torch

    program = load_program(path)
    specs = input_specs(program)
    shapes = shapes or example_shapes(program, specs)
    check_shapes(specs, shapes)
    inputs = seeded_inputs(specs, shapes, seed, program)
    try:
        with torch.no_grad():
            outputs = flat_outputs(program.module()(*inputs))
    except Exception as error:
        raise UsageError(f"the program rejects inputs of shape "
                         f"{', '.join('x'.join(map(str, s)) for s in shapes)}: {first_line(error)}")
    if not outputs:
        raise UsageError("the program returns no tensor")
    torch.save([t.contiguous() for t in inputs], f"{out_dir}/inputs.pt")
    write_raw(inputs, f"{out_dir}/inputs")
    write_raw([t.detach().float() for t in outputs], f"{out_dir}/reference")
    return {"kind": "exported_program", "torch_version": torch.__version__, "saved_by": saved_torch_version(path),
            "inputs": [dict(spec, shape=shape) for spec, shape in zip(specs, shapes)]}


def main(argv):
    command, path = argv[0], argv[1]
    if command == "describe":
        print(json.dumps({"kind": model_kind(path)}))
        return 0
    if command == "prepare":  # prepare PATH OUT_DIR SEED [SHAPE ...], a shape as 1x3x224x224
        shapes = [[int(s) for s in text.split("x")] for text in argv[4:]]
        print(json.dumps(prepare(path, shapes, int(argv[3]), argv[2])))
        return 0
    print(f"unknown command {command}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as error:
        print(error, file=sys.stderr)
        sys.exit(2)
    except Exception as error:
        print(f"{type(error).__name__}: {first_line(error)}", file=sys.stderr)
        sys.exit(1)
