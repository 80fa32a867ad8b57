"""Where things happen in the user's code: the job's code roots, the torch.compile call that made a
compiled region, the line that created an optimizer, and the Python stack around a compile.

Everything here runs once per torch.compile call, optimizer or compile event, never per step.
"""

import getpass
import importlib.metadata
import json
import os
import re
import site
import sys
import sysconfig
import tempfile
import urllib.parse
import urllib.request
import weakref

from . import _settings, origins, parse

_MAX_FRAMES = 64
_ENTRY_ATTRIBUTE = "_torchscope_entry"

scope = parse.CodeScope()
_optimizer_sites = {}  # id(optimizer) -> (weakref to it, Frame of its construction)


# --- which files are the user's ---------------------------------------------------------------


def _editable_roots():
    """Folders of the packages installed in editable mode (pip -e, setup.py develop)."""
    roots = []
    for distribution in importlib.metadata.distributions():
        try:
            direct_url = json.loads(distribution.read_text("direct_url.json") or "{}")
        except (ValueError, OSError):
            continue
        url = direct_url.get("url", "")
        if direct_url.get("dir_info", {}).get("editable") and url.startswith("file:"):
            roots.append(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    for folder in site.getsitepackages() if hasattr(site, "getsitepackages") else []:
        try:
            links = [name for name in os.listdir(folder) if name.endswith(".egg-link")]
        except OSError:
            continue
        for name in links:
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as link:
                    roots.append(link.readline().strip())
            except OSError:
                continue
    return roots


def _script_roots():
    roots = []
    script = sys.argv[0] if sys.argv else ""
    if script and script not in ("-c", "-m") and os.path.exists(script):
        roots.append(os.path.dirname(os.path.abspath(script)))
    first = sys.path[0] if sys.path else None
    if first is not None and (first == "" or os.path.isdir(first)):
        roots.append(os.path.abspath(first or os.curdir))
    return roots


def _library_roots(torch):
    roots = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    if hasattr(site, "getsitepackages"):
        roots += site.getsitepackages()
    roots.append(site.getusersitepackages())
    paths = sysconfig.get_paths()
    roots += [paths.get(key, "") for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    roots.append(os.path.dirname(os.path.abspath(torch.__file__)))
    return roots + _generated_code_roots() + _own_roots()


def _generated_code_roots():
    """Where Inductor writes the code it generates: its wrappers run on the job's stacks (the sampler's lines) but
    are not the user's. Torch's own rule (torch._inductor.runtime.cache_dir_utils), written out here so as not to
    import Inductor into an eager job nor create the folder."""
    configured = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if configured:
        return [configured]
    try:
        user = re.sub(r'[\\/:*?"<>|]', "_", getpass.getuser())
    except Exception:
        user = f"uid_{os.getuid()}" if hasattr(os, "getuid") else "unknown_user"
    return [os.path.join(tempfile.gettempdir(), "torchinductor_" + user)]


def _own_roots():
    """torchscope's own Python: this bridge and the packages of the torch-import hooks (under
    `torchscope fix`, its launcher, which wraps torch.compile and runs the job, so its frames sit
    between the user's)."""
    from . import torch_import_hooks

    roots = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    for module, _ in torch_import_hooks():
        package = sys.modules.get(module.partition(".")[0])
        if getattr(package, "__file__", None):
            roots.append(os.path.dirname(os.path.abspath(package.__file__)))
    return roots


def _with_real_paths(roots):
    unique = []
    for root in roots:
        if not root:
            continue
        for path in (os.path.abspath(root), os.path.realpath(root)):
            if path not in unique:
                unique.append(path)
    return unique


def discover_roots(torch):
    """Sets and returns the job's CodeScope: its script folder, sys.path[0], editable installs and
    TORCHSCOPE_USER_CODE are the user's; the interpreter's prefixes, site-packages, the standard
    library, torch and torchscope's own Python are not."""
    global scope
    extra = _settings.entries(_settings.USER_CODE)
    try:
        editable = _editable_roots()
    except Exception:
        editable = []
    own = _with_real_paths(_own_roots())
    user = [root for root in _with_real_paths(_script_roots() + editable + extra) if root not in own]
    scope = parse.CodeScope(user, _with_real_paths(_library_roots(torch)))
    return scope


# --- live stacks ------------------------------------------------------------------------------


def stack_of(frame):
    """The Python stack from `frame` outwards as Frames, outermost first (innermost 64)."""
    frames = []
    while frame is not None and len(frames) < _MAX_FRAMES:
        code = frame.f_code
        frames.append(parse.Frame(code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    frames.reverse()
    return frames


def innermost_user(frames):
    for frame in reversed(frames):
        if scope.is_user(frame.file):
            return frame
    return None


def _is_dynamo(frame, filename):
    return frame.f_code.co_filename.endswith(os.sep + os.path.join("_dynamo", filename))


class CompileContext:
    """The program's stack while torch compiles a frame (taken inside torch's compile callback):
    the live frames outside the callback, the frame being compiled, and the entry point."""

    def __init__(self, start):
        outside, compiling = [], None
        frame = start
        while frame is not None:
            if _is_dynamo(frame, "convert_frame.py"):
                outside = []
                candidate = frame.f_locals.get("frame") if compiling is None else None
                if candidate is not None and hasattr(candidate, "f_code"):
                    compiling = candidate
            else:
                outside.append(frame)
            frame = frame.f_back
        self.live = outside[:_MAX_FRAMES]  # innermost first
        self.compiling = compiling
        self.stack = [parse.Frame(f.f_code.co_filename, f.f_lineno, f.f_code.co_name) for f in reversed(self.live)]

    def caller(self):
        """The innermost live frame in the user's code: the call into the compiled code."""
        for frame in self.live:
            if scope.is_user(frame.f_code.co_filename):
                return frame
        return None

    def entry(self):
        """The torch.compile call that made the innermost compiled region on the stack, or None."""
        for frame in self.live:
            if _is_dynamo(frame, "eval_frame.py") and frame.f_code.co_name in ("compile_wrapper", "_fn"):
                entry = getattr(frame.f_locals.get("self"), _ENTRY_ATTRIBUTE, None)
                if entry is not None:
                    return entry
        return None

    def compiling_self(self):
        try:
            return self.compiling.f_locals.get("self") if self.compiling is not None else None
        except Exception:
            return None


# --- torch.compile call sites -----------------------------------------------------------------


class Entry:
    """A torch.compile call: where the user wrote it, and the optimizer its region steps, once seen."""

    def __init__(self, site):
        self.site = site
        self.optimizer_id = None


def _dynamo_context(compiled):
    context = getattr(compiled, "dynamo_ctx", None)  # an OptimizedModule
    if context is not None:
        return context
    code, closure = getattr(compiled, "__code__", None), getattr(compiled, "__closure__", None)
    for name, cell in zip(code.co_freevars if code else (), closure or ()):
        if name == "self":
            try:
                return cell.cell_contents
            except ValueError:
                return None
    return None


def _within_any(path, roots):
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _compile_wrappers(torch):
    """The code of torch.compile as the job sees it now and of what it wraps: a library that replaces
    torch.compile by a wrapper (Lightning records its arguments so) passes the user's call through."""
    codes, function = set(), getattr(torch, "compile", None)
    while function is not None and len(codes) < 8:
        code = getattr(function, "__code__", None)
        if code is None or code in codes:
            break
        codes.add(code)
        function = getattr(function, "__wrapped__", None)
    return codes


def _library_module_compile(frame, module_type):
    """A library's own `compile()` of a module (a model class that forwards to nn.Module.compile or compiles itself
    there): the user's `model.compile()` that called it is the call to change."""
    if frame.f_code.co_name != "compile" or module_type is None or scope.is_user(frame.f_code.co_filename):
        return False
    try:
        return isinstance(frame.f_locals.get("self"), module_type)
    except Exception:
        return False


def compile_call_site(caller):
    """The line that called torch.compile, past torch's own callers (nn.Module.compile), a library module's own
    compile(), wrappers of torch.compile and torchscope's own (fix's launcher): the user's, or a framework's
    (transformers' Trainer, accelerate) that compiles the model itself, which is kept as it is: the user's line is
    then the call into the compiled code."""
    torch = sys.modules.get("torch")
    passed = _with_real_paths(_own_roots() + ([os.path.dirname(os.path.abspath(torch.__file__))] if torch else []))
    wrappers = _compile_wrappers(torch) if torch else set()
    module_type = getattr(getattr(torch, "nn", None), "Module", None)
    frame = caller
    for _ in range(_MAX_FRAMES):
        if frame is None:
            break
        code = frame.f_code
        if (code not in wrappers and not code.co_filename.startswith("<") and not _within_any(code.co_filename, passed)
                and not _library_module_compile(frame, module_type)):
            return parse.Frame(code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


def note_compile(compiled, caller):
    """Remembers where torch.compile was called for the region `compiled`; returns its Entry."""
    context = _dynamo_context(compiled)
    site = compile_call_site(caller) or innermost_user(stack_of(caller))
    if context is None or site is None:
        return None
    entry = getattr(context, _ENTRY_ATTRIBUTE, None) or Entry(site)
    try:
        setattr(context, _ENTRY_ATTRIBUTE, entry)
    except (AttributeError, TypeError):
        return None
    return entry


# --- optimizers -------------------------------------------------------------------------------


def note_optimizer(optimizer, caller):
    site = innermost_user(stack_of(caller))
    if site is not None:
        _optimizer_sites[id(optimizer)] = (weakref.ref(optimizer), site)


def optimizer_site(optimizer):
    """Where `optimizer` was created; any known optimizer's when it is the only one and `optimizer` is None."""
    if optimizer is not None:
        known = _optimizer_sites.get(id(optimizer))
        return known[1] if known and known[0]() is optimizer else None
    alive = [site for reference, site in _optimizer_sites.values() if reference() is not None]
    return alive[0] if len(alive) == 1 else None


def forget_after_fork():
    _optimizer_sites.clear()


# --- where a guarded Python value comes from --------------------------------------------------


def _root_object(context, expression):
    """The object an expression like "L['self'].param_groups[0]['lr']" starts from, in the compiled frame."""
    root = parse.guarded_source(expression).split(".", 1)[0].split("[", 1)[0]
    compiling = context.compiling
    if compiling is None or not root.isidentifier():
        return None
    try:
        if expression.startswith("G["):
            return compiling.f_globals.get(root)
        return compiling.f_locals.get(root, compiling.f_globals.get(root))
    except Exception:
        return None


def _parameter_position(code, name):
    parameters = code.co_varnames[:code.co_argcount] if code is not None else ()
    if name not in parameters:
        return None
    position = parameters.index(name)
    return position - 1 if parameters[0] == "self" else position


def value_source(context, reasons, optimizer_type):
    """(kind, Frame) of the Python value behind the first guard on a Python number, or None.
    kind: "optimizer" (a hyperparameter set where the optimizer was created), "attribute" (the line
    that reads or updates it), "global", "item" (a .item() result) or "argument" (the call passing it)."""
    for reason in reasons:
        expression = parse.scalar_guard(reason["guard"])
        if expression is None:
            continue
        source = parse.guarded_source(expression)
        read_at = innermost_user(reason["stack"])
        if "param_groups" in source:
            owner = _root_object(context, expression)
            site = optimizer_site(owner if isinstance(owner, optimizer_type) else None)
            return ("optimizer", site) if site is not None else None
        if expression.startswith("G["):
            return ("global", read_at) if read_at is not None else None
        if not source.isidentifier():
            return ("attribute", read_at) if read_at is not None else None
        caller = context.caller()
        if caller is None:
            return None
        code = getattr(context.compiling, "f_code", None)
        origin = origins.argument_origin(caller.f_code.co_filename, caller.f_lineno, source,
                                         _parameter_position(code, source))
        if origin is None:
            return "argument", parse.Frame(caller.f_code.co_filename, caller.f_lineno, caller.f_code.co_name)
        return origin[0], parse.Frame(caller.f_code.co_filename, origin[1], caller.f_code.co_name)
    return None
