"""Programs kept across processes: an entry point's traced and lowered program (an impact map, the compliant phase,
a stride, a gait's solve) serialised by `jax.export` into a folder beside JAX's compilation cache, so that a later
process calls it without tracing the Python function again.

:func:`stored` wraps a function already wrapped by ``equinox.filter_jit``. Called from Python with concrete
arguments while the store is on (:func:`~difimpact.use_compilation_cache`), it looks its program up by a key of
everything the program depends on: the versions of difimpact, its sources, JAX and the libraries it traces
through, the platform, the numeric settings, the static part of the arguments (the treedef with the static
fields, and the non-array leaves) and the shapes and dtypes of the arrays. Where the static part holds anything
whose meaning the key cannot pin down (a class or function from outside difimpact and its libraries, a lambda, an
object shown by its memory address), the call is the plain one. Calls with traced arguments (inside a caller's
``jit``, ``vmap`` or ``grad``) are always the plain call; so is any call whose stored file cannot be read, and
one whose program cannot be exported (a host callback in it), which its file records as such."""

import contextlib
import dataclasses
import enum
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import pathlib
import pickle
import re
import sys
import tempfile
import types
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import numpy as np

# The packages whose types and functions may appear in a stored call's static part: difimpact's sources are in the
# key, and the others' versions.
_LIBRARIES = ("equinox", "lineax", "optimistix", "diffrax", "numpy", "jaxlib")
_TRUSTED = frozenset(("difimpact", "jax", "builtins", *_LIBRARIES))
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
_FORMAT = 2  # the layout of a stored file (its outputs strongly typed)
# XLA's options for a program called from Python (an entry point's, :func:`difimpact._check.program`, and a gait
# solve's): on a CPU, loop fusions through XLA's elemental emitter rather than its MLIR fusion emitters, less compile
# time for the same or a shorter run (docs/performance.md); ignored on other devices, and where the call is inside a
# caller's own `jit`. A multi-phase gait's solve also at LLVM's default optimisation whatever a process's flags ask
# (the test suite asks for level 0, a short compile): at level 0 the seven-link human's solve costs several times its
# optimised run, more than the compile saves.
# XLA's YNNPACK fusions off too: such a program loads from the compilation cache much more slowly, for no quicker
# run of these small products. Only on the jaxlib versions where measured (XLA rejects an option it does not know).
MEASURED_JAXLIB = ((0, 10),)


def jaxlib_version() -> tuple[int, ...]:  # (major, minor)
    return tuple(int(v) for v in importlib.metadata.version("jaxlib").split(".")[:2])


_NO_YNN = {"xla_cpu_experimental_ynn_fusion_type": ""} if jaxlib_version() in MEASURED_JAXLIB else {}
PROGRAM_OPTIONS = {"xla_cpu_use_fusion_emitters": False, **_NO_YNN}
OPTIMISED_PROGRAM_OPTIONS = {**PROGRAM_OPTIONS, "xla_backend_optimization_level": 2}


class _Unstorable(Exception):
    """The static part holds something the key cannot describe."""


_folder: pathlib.Path | None = None
_programs: dict[tuple, "_Program | None"] = {}  # (key, device): the program held here (None: the plain call)


def folder() -> pathlib.Path | None:
    """The store's folder, or ``None`` where it is off."""
    return _folder


def set_folder(folder: pathlib.Path | None) -> None:
    """Switch the store on in `folder` (created if missing), or off with ``None``; off where the ``flatbuffers``
    package that JAX's serialisation needs is missing."""
    global _folder
    if folder is not None and importlib.util.find_spec("flatbuffers") is None:  # JAX's format needs it
        folder = None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    _folder = folder


@functools.cache
def _environment() -> str:
    """The key's part fixed in a process: difimpact's version and a hash of its ``.py`` sources (an edited
    checkout never reads an older program), the versions of JAX and the traced-through libraries."""
    root = pathlib.Path(__file__).parent
    sources = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        sources.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    versions = {}
    for name in ("difimpact", *_LIBRARIES):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return repr((_FORMAT, versions, sources.hexdigest(), jax.__version__))


def _settings() -> str:
    """The key's part that a process may change: the platform, JAX's numeric settings and what a trace checks
    (the rank promotion it rejects; equinox's ``EQX_ON_ERROR``, which makes a library's own checks NaN or nothing)."""
    return repr((jax.default_backend(), jax.config.jax_enable_x64, jax.config.jax_default_matmul_precision,
                 jax.config.jax_numpy_dtype_promotion, jax.config.jax_numpy_rank_promotion,
                 eqx._errors.EQX_ON_ERROR))


def _trusted(obj) -> str:
    """The importable name ``module:qualname`` of a class or function of difimpact or its libraries, which
    names it: the object found there is `obj` itself (not a closure or a class made at run time)."""
    module, name = getattr(obj, "__module__", None) or "", getattr(obj, "__qualname__", "")
    if module.partition(".")[0] not in _TRUSTED or "<" in name:
        raise _Unstorable(f"{module}:{name}")
    if module == "builtins":  # a built-in type (NoneType): one per process, made by no code of anyone's
        return f"{module}:{name}"
    try:
        found = functools.reduce(getattr, name.split("."), sys.modules[module])
    except (KeyError, AttributeError):
        raise _Unstorable(f"{module}:{name}") from None
    if found is not obj and not (isinstance(obj, types.FunctionType) and getattr(found, "__func__", None) is obj):
        raise _Unstorable(f"{module}:{name}")
    return f"{module}:{name}"


def _text(obj) -> str:
    """A text of a static value that determines it: equal texts, equal values (no memory addresses)."""
    if obj is None or obj is Ellipsis or type(obj) in (bool, int, float, complex, str, bytes):
        return f"{type(obj).__name__}:{obj!r}"
    if isinstance(obj, enum.Enum):
        return f"{_trusted(type(obj))}.{obj.name}"
    if isinstance(obj, (tuple, list)):
        return f"{_trusted(type(obj))}({','.join(map(_text, obj))})"
    if isinstance(obj, dict):
        return f"{_trusted(type(obj))}{{{','.join(f'{_text(k)}:{_text(v)}' for k, v in obj.items())}}}"
    if isinstance(obj, (set, frozenset)):
        return f"{_trusted(type(obj))}{{{','.join(sorted(map(_text, obj)))}}}"
    if isinstance(obj, (np.ndarray, np.generic, jax.Array)):
        if isinstance(obj, jax.core.Tracer):
            raise _Unstorable("a tracer")
        a = np.asarray(obj)
        return f"array({a.dtype.str},{a.shape},{hashlib.sha256(a.tobytes()).hexdigest()})"
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType, np.dtype)):
        return str(obj) if isinstance(obj, np.dtype) else _trusted(obj)
    if isinstance(obj, types.MethodType):
        return f"{_text(obj.__self__)}.{_trusted(obj.__func__)}"
    if dataclasses.is_dataclass(obj):  # an equinox Module held in a static field
        fields = (f"{f.name}={_text(getattr(obj, f.name, None))}" for f in dataclasses.fields(obj))
        return f"{_trusted(type(obj))}({','.join(fields)})"
    if getattr(obj, "__dict__", None):  # another object of difimpact or a library: its attributes
        return f"{_trusted(type(obj))}({_text(dict(sorted(vars(obj).items())))})"
    text = f"{_trusted(type(obj))}:{obj!r}"  # an object without attributes: a library's sentinel (`Missing`)
    if _ADDRESS.search(text):
        raise _Unstorable(text)
    return text


def _structure(treedef) -> str:
    """The text of a treedef: its node types and their static data, depth first."""
    data = treedef.node_data()
    if data is None:
        return "*" if treedef.num_leaves else "None"
    kind, aux = data
    return f"{_trusted(kind)}[{_text(aux)}]({','.join(map(_structure, treedef.children()))})"


def _key(name: str, static, dyn_def, arrays: list) -> tuple[str, str]:
    """``(hash, text)`` of a call: `static` the non-array part of its arguments, `dyn_def` the treedef of its
    array part and `arrays` that part's leaves."""
    leaves, treedef = jax.tree.flatten(static)
    avals = [(np.dtype(a.dtype).str, tuple(a.shape), bool(getattr(a, "weak_type", False))) for a in arrays]
    text = "\n".join((_environment(), _settings(), name, _structure(treedef), _text(leaves),
                      _structure(dyn_def), repr(avals)))
    return hashlib.sha256(text.encode()).hexdigest(), text


def _is_none(x) -> bool:  # the leaves of an output's static part: its None too
    return x is None


@dataclasses.dataclass(frozen=True)
class _Program:
    """A loaded or exported program's call, and what rebuilds its output: the part that is not arrays (``None``
    in their places; pickled beside the program) and which of its ``None`` leaves are arrays."""

    call: Callable
    static: Any
    is_array: tuple[bool, ...]

    def __call__(self, arrays: list) -> Any:
        outs = iter(self.call(*arrays))
        leaves, treedef = jax.tree.flatten(self.static, is_leaf=_is_none)
        return jax.tree.unflatten(treedef, [next(outs) if a else x for a, x in zip(self.is_array, leaves)])


def _program(exported, static, is_array: tuple[bool, ...], arrays: list, name: str, options=None) -> _Program:
    """A :class:`_Program` of an exported program, checked against the call's arrays and its output's leaves."""
    avals = [(tuple(a.shape), np.dtype(a.dtype)) for a in arrays]
    if [(tuple(a.shape), np.dtype(a.dtype)) for a in exported.in_avals] != avals:
        raise ValueError("the stored program's arguments differ from the call's")
    leaves = jax.tree.leaves(static, is_leaf=_is_none)
    if len(exported.out_avals) != sum(is_array) or len(is_array) != len(leaves) or any(
            a and x is not None for a, x in zip(is_array, leaves)):
        raise ValueError("the stored program's outputs differ from its recorded structure")

    def program(*args):  # under the exported function's name: JAX names its compiled program (and file) jit_<name>
        return exported.call(*args)

    program.__name__ = program.__qualname__ = name
    sharding = jax.sharding.SingleDeviceSharding(_device(arrays))
    return _Program(jax.jit(program, in_shardings=sharding, compiler_options=options), static, tuple(is_array))


def _device(arrays: list):
    """The one device of the call's arrays (JAX's default device where they have none). A stored program's inputs
    are placed there by its own sharding, committed or not: the outputs of an exported call are committed to
    their device, and passed to another call they would otherwise make JAX compile it again, for a program of
    another key in the compilation cache (a gait warm-started from a stored solve's). Several devices: raises."""
    devices = {d for a in arrays if isinstance(a, jax.Array) for d in a.devices()}
    if len(devices) > 1:
        raise ValueError("a stored program's arrays on several devices")
    return devices.pop() if devices else jax.devices()[0]


def _export(fn: Callable, static, dyn_def, arrays: list):
    """`fn` traced, lowered and exported on the avals of `arrays` (the static part `static` closed over):
    ``(exported, the output's part that is not arrays, which of its None leaves were arrays)``."""
    record = {}

    def flat(*leaves):
        args, kwargs = eqx.combine(jax.tree.unflatten(dyn_def, leaves), static)
        out = fn(*args, **kwargs)
        outs = jax.tree.leaves(out, is_leaf=_is_none)
        record["static"] = eqx.partition(out, eqx.is_array)[1]
        record["is_array"] = tuple(map(eqx.is_array, outs))
        # Strongly typed: a deserialised program's outputs are (JAX keeps no weak types in the file), and an output
        # weak in the process that exported it and strong in the next would give a call it feeds two keys.
        return [jax.lax.convert_element_type(x, x.dtype) for x in outs if eqx.is_array(x)]

    avals = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=bool(getattr(a, "weak_type", False)))
             for a in arrays]
    exported = jax.export.export(jax.jit(flat))(*avals)
    return exported, record["static"], record["is_array"]


def _write(path: pathlib.Path, data: bytes) -> None:
    """`data` into `path`, atomically: a temporary file in the same folder, then renamed."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise


def _read(path: pathlib.Path, text: str, arrays: list, name: str, options=None) -> "_Program | None":
    """The program stored in `path` for the call of key text `text`, or ``None`` where the file records that the
    call cannot be exported (any failure raises)."""
    fmt, stored_text, blob, static, is_array = pickle.loads(path.read_bytes())
    if fmt != _FORMAT or stored_text != text:
        raise ValueError("a stored program of another call")
    if blob is None:
        return None
    return _program(jax.export.deserialize(bytearray(blob)), static, is_array, arrays, name, options)


def _fresh(fn: Callable, static, dyn_def, arrays: list, path: pathlib.Path, text: str, options=None) -> _Program:
    """The program exported now, and written to `path` (where the folder cannot be written, kept only here). A
    call that cannot be exported (a host callback in its program, which JAX does not serialise) is recorded in
    `path` as such, so that a later process makes the plain call at once instead of tracing it twice."""
    try:
        exported, out_static, is_array = _export(fn, static, dyn_def, arrays)
        blob = exported.serialize()
    except Exception:
        with contextlib.suppress(OSError):
            _write(path, pickle.dumps((_FORMAT, text, None, None, None)))
        raise
    program = _program(exported, out_static, is_array, arrays, fn.__name__, options)
    with contextlib.suppress(OSError):
        _write(path, pickle.dumps((_FORMAT, text, blob, out_static, is_array)))
    return program


def inside_a_trace() -> bool:
    """Whether this call is traced into a caller's program (its `jit` around a call of constants), where XLA's
    options are refused: JAX stages every operation there, one of a constant too (a tracer), where at the top
    level ``stop_gradient`` of a Python number returns a number without dispatching anything (microseconds)."""
    return isinstance(jax.lax.stop_gradient(0.0), jax.core.Tracer)


def _call(fn: Callable, top: Callable, name: str, args: tuple, kwargs: dict, options=None):
    """`fn(*args, **kwargs)` by its stored program where it can be, else the plain call (`top`, compiled with
    XLA's `options`, from Python; `fn` under a caller's own transformation). A program this process already holds
    is called; else the stored file is read, or (missing, unreadable or failing) exported again and written; a call
    that cannot be exported is the plain call from then on, in this process and (recorded in its file) the next."""
    dynamic, static = eqx.partition((args, kwargs), eqx.is_array)
    arrays, dyn_def = jax.tree.flatten(dynamic)
    if any(isinstance(a, jax.core.Tracer) for a in arrays) or (options and inside_a_trace()):
        return fn(*args, **kwargs)
    if _folder is None or jax.config.jax_disable_jit:
        return top(*args, **kwargs)
    try:
        key, text = _key(name, static, dyn_def, arrays)
    except Exception:  # noqa: BLE001 - _Unstorable, or a structure the key cannot walk: the plain call
        return top(*args, **kwargs)
    try:
        key = (key, _device(arrays))  # a program held per device: its inputs are placed there
    except ValueError:
        return top(*args, **kwargs)
    if key in _programs:
        program = _programs[key]
        return top(*args, **kwargs) if program is None else program(arrays)
    path = _folder / f"{name}-{key[0][:40]}.exported"
    read = functools.partial(_read, path, text, arrays, fn.__name__, options)
    for obtain in (read, functools.partial(_fresh, fn, static, dyn_def, arrays, path, text, options)):
        try:
            program = obtain()
            if program is None:  # recorded as not exportable
                break
            out = program(arrays)
        except Exception:  # noqa: BLE001 - any failure of a stored program means the next way, at last the plain call
            continue
        _programs[key] = program
        return out
    _programs[key] = None
    return top(*args, **kwargs)


def stored(name: str, compiler_options: dict | None = None) -> Callable[[Callable], Callable]:
    """Decorate a function wrapped by ``equinox.filter_jit`` so that its calls from Python go through the store
    (:mod:`difimpact._exported`), keyed by `name` and the call; its attributes (``lower``) are the function's.
    `compiler_options`: XLA's options for the programs compiled for a call from Python, stored or not (JAX takes
    them only at the top level: under a caller's own ``jit``, ``vmap`` or ``grad`` the function is traced into the
    caller's program as it is)."""

    def decorate(fn: Callable) -> Callable:
        top = eqx.filter_jit(fn, compiler_options=compiler_options) if compiler_options else fn

        @functools.wraps(fn)
        def call(*args, **kwargs):
            return _call(fn, top, name, args, kwargs, compiler_options)

        call.lower = fn.lower  # type: ignore[attr-defined]
        return call

    return decorate
