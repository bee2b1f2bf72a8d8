"""Programs kept across processes (`difimpact._exported`): with the store on (`use_compilation_cache`), the gaits'
solves called from Python are exported by `jax.export` into ``<cache>/exported/``, and a second process calls the
stored program without tracing the solve again (the traced function made to raise: no timing), with the same
result bit for bit. Calls inside a caller's `jit` or `grad` are the plain call; an unreadable file is exported
again; a key names every static option; a failed solve still raises its message.

The gait is the smallest one (the biped with a torso on two segments), compiled once, in the first of two
processes; the other checks trace without compiling, or use a small function of their own."""

import functools
import json
import math
import os
import pickle
import subprocess
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

import difimpact as di
from difimpact import _exported

pytest.importorskip("flatbuffers", reason="JAX's serialisation of exported programs needs it")

A = math.asin(0.25 / 0.8)  # legs of 0.8 m, a step of 0.5 m: the stance leg's angle
GUESS = jnp.array([-A, -2 * A, -A])
SMALL = dict(step_length=0.5, step_time=0.5, segments=2)
ITERATION_LIMIT = di.NLPResults[di.NLPResults.iteration_limit]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A private store folder, and no program held by this process."""
    folder = tmp_path / "exported"
    folder.mkdir()
    monkeypatch.setattr(_exported, "_folder", folder)
    monkeypatch.setattr(_exported, "_programs", {})
    return folder


SCRIPT = """
import json, math, sys
import equinox as eqx, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
import difimpact as di
from difimpact._powered import optimal
di.use_compilation_cache(sys.argv[1])
if sys.argv[2] == "untraced":
    def traced(*args):
        raise AssertionError("the solve was traced")
    optimal._gait = traced  # only the traced solve calls it
a = math.asin(0.25 / 0.8)
walker, guess = di.biped_torso_walker(), jnp.array([-a, -2 * a, -a])
gait = lambda steps, throw=True: di.optimal_gait(  # the iteration limit an array: one program for both
    walker, guess, step_length=0.5, step_time=0.5, segments=2, options=di.NLPOptions(max_steps=jnp.asarray(steps)),
    throw=throw)
solved = gait(300)
out = dict(cost=float(solved.cost).hex(), x=[float(v).hex() for v in solved.solution.x],
           structure=str(jax.tree.structure(solved)), solved=bool(solved.result == di.NLPResults.successful))
try:  # the same program, its failure raised after it
    out["raised"] = gait(1) and None
except eqx.EquinoxRuntimeError as error:
    out["raised"] = str(error)
print(json.dumps(out))
"""


@pytest.mark.slow  # CI's second stage (tests/conftest.py): the README's command keeps its 7 minutes
def test_second_process_calls_the_stored_program(tmp_path):
    """A first process exports and stores the solve's program; a second finds it and calls it without tracing the
    solve (the function that only the traced solve calls raises there): the same gait bit for bit, the same
    structure, and a failed solve (the iteration limit, the same program) still raises its message."""
    folder = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith((
        "JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "JAX_ENABLE_COMPILATION_CACHE"))}

    def run(mode):
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder), mode], env=env, capture_output=True,
                              text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.splitlines()[-1])

    first = run("first")
    stored = {p.name: p.stat().st_mtime_ns for p in (folder / "exported").iterdir()}
    assert len(stored) == 1 and next(iter(stored)).startswith("optimal_gait-"), stored
    second = run("untraced")
    assert {p.name: p.stat().st_mtime_ns for p in (folder / "exported").iterdir()} == stored
    assert first == second
    assert first["solved"] and first["raised"] == ITERATION_LIMIT


@pytest.mark.slow  # CI's second stage (tests/conftest.py): the README's command keeps its 7 minutes
def test_inside_a_callers_trace_the_plain_call(store):
    """Inside a caller's `jit` and `grad` (traced, not compiled: `eval_shape`) the solve is the plain call:
    nothing stored."""

    def cost(step_time):
        return di.optimal_gait(di.biped_torso_walker(), GUESS, step_length=0.5, step_time=step_time,
                               segments=2).cost

    assert jax.eval_shape(jax.jit(cost), 0.5).shape == ()
    assert jax.eval_shape(jax.grad(cost), 0.5).shape == ()
    assert not any(store.iterdir())


class _Recorded(Exception):
    pass


def _key(monkeypatch, **kwargs) -> str:
    """The key of the call of the solve by `optimal_gait` (which is then neither traced nor run)."""
    keys = []

    def record(fn, top, name, args, kw, options=None):
        dynamic, static = eqx.partition((args, kw), eqx.is_array)
        arrays, treedef = jax.tree.flatten(dynamic)
        keys.append(_exported._key(name, static, treedef, arrays)[0])
        raise _Recorded

    with monkeypatch.context() as patch:
        patch.setattr(_exported, "_call", record)
        with pytest.raises(_Recorded):
            di.optimal_gait(di.biped_torso_walker(), GUESS, **{**SMALL, **kwargs})
    return keys[0]


def test_key_names_every_static_option(monkeypatch):
    """The same call, the same key; another mesh, cost, bound or option, another key (another program)."""
    key = _key(monkeypatch)
    assert _key(monkeypatch) == key
    others = [dict(segments=3), dict(cost="positive-work"), dict(method="trapezoid"), dict(friction=0.8),
              dict(options=di.NLPOptions(max_steps=50))]
    keys = {_key(monkeypatch, **other) for other in others}
    assert key not in keys and len(keys) == len(others)


class Scale(eqx.Module):
    factor: jax.Array
    mode: str = eqx.field(static=True)


class Scaled(eqx.Module):
    value: jax.Array
    scale: Scale
    power: int


@_exported.stored("test_scaled")
@eqx.filter_jit
def scaled(scale: Scale, x, power: int) -> Scaled:
    sign = -1.0 if scale.mode == "negative" else 1.0
    return Scaled(sign * scale.factor * x**power, scale, power)


@pytest.fixture
def trusted(monkeypatch):
    """This module's classes and functions admitted to the key, as difimpact's are."""
    monkeypatch.setattr(_exported, "_TRUSTED", _exported._TRUSTED | {__name__.partition(".")[0]})


def _check(out, x, power, mode="positive"):
    assert isinstance(out, Scaled) and isinstance(out.scale, Scale) and out.scale.mode == mode
    assert out.power == power and float(out.value) == (-1 if mode == "negative" else 1) * 2.0 * x**power


def test_stored_and_called_again(store, trusted):
    """A call is stored and rebuilt: the output's static fields and Python numbers from the pickle, the arrays
    from the program; a held program serves the next call, a new process's read one too (this process's
    programs forgotten); a static field or a Python number of the arguments changes the key."""
    _check(scaled(Scale(jnp.asarray(2.0), "positive"), jnp.asarray(3.0), 2), 3.0, 2)
    files = sorted(store.iterdir())
    assert len(files) == 1
    _exported._programs.clear()
    _check(scaled(Scale(jnp.asarray(2.0), "positive"), jnp.asarray(1.5), 2), 1.5, 2)
    assert sorted(store.iterdir()) == files
    _check(scaled(Scale(jnp.asarray(2.0), "negative"), jnp.asarray(1.5), 2), 1.5, 2, "negative")
    _check(scaled(Scale(jnp.asarray(2.0), "positive"), jnp.asarray(1.5), 3), 1.5, 3)
    assert len(list(store.iterdir())) == 3


def test_output_passed_back_compiles_nothing_more(store, trusted):
    """The outputs of a stored program are committed to their device (as those of any exported call): passed back
    to the program (a gait warm-started from a stored solve's) they run the same compiled program, and a program
    held for the arrays' device serves them (JAX's compile events counted)."""
    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, duration, **kw: compiles.append(event) if event.endswith("backend_compile_duration") else None)
    strong = functools.partial(jnp.asarray, dtype=jnp.result_type(float))  # as a stored program's outputs are
    first = scaled(Scale(strong(2.0), "positive"), strong(3.0), 2)
    assert first.value.committed
    before = len(compiles)
    again = scaled(first.scale, first.value, 2)
    assert float(again.value) == 2.0 * 18.0**2
    assert len(compiles) == before and len(list(store.iterdir())) == 1


def test_outputs_strongly_typed_whether_exported_here_or_read(store, trusted):
    """A weakly typed output (a Python number times a weak input) comes out strongly typed from the program
    exported in this process and from the one read back: the outputs feed a later call's key, and one weak here
    and strong in the next process (JAX's files keep no weak types) gave that call a second key, exported again."""
    factor, x = jnp.asarray(2.0), jnp.asarray(3.0)  # weakly typed, as Python numbers made arrays
    plain = scaled.__wrapped__(Scale(factor, "positive"), x, 2)
    exported_here = scaled(Scale(factor, "positive"), x, 2)
    _exported._programs.clear()
    read_back = scaled(Scale(factor, "positive"), x, 2)
    assert plain.value.weak_type and len(list(store.iterdir())) == 1
    assert [exported_here.value.weak_type, read_back.value.weak_type] == [False, False]
    assert float(exported_here.value) == float(read_back.value) == float(plain.value) == 18.0


def test_corrupted_file_exported_again(store, trusted):
    """An unreadable file (or one of another call) is not used: the call is exported again, right, and the file
    rewritten."""
    _check(scaled(Scale(jnp.asarray(2.0), "positive"), jnp.asarray(3.0), 2), 3.0, 2)
    (path,) = store.iterdir()
    good = path.read_bytes()
    for bad in (b"not a program", good[: len(good) // 2], pickle.dumps((1, "another call", b"", None, ()))):
        path.write_bytes(bad)
        _exported._programs.clear()
        _check(scaled(Scale(jnp.asarray(2.0), "positive"), jnp.asarray(1.5), 2), 1.5, 2)
        assert pickle.loads(path.read_bytes())[1] == pickle.loads(good)[1]


def test_traced_arguments_take_the_plain_call(store, trusted):
    """Traced arguments (a caller's `jit`, `vmap`, `grad`): the plain call, nothing stored."""
    scale = Scale(jnp.asarray(2.0), "positive")
    assert float(jax.jit(lambda x: scaled(scale, x, 2).value)(3.0)) == 18.0
    assert jax.vmap(lambda x: scaled(scale, x, 2).value)(jnp.arange(3.0)).tolist() == [0.0, 2.0, 8.0]
    assert float(jax.grad(lambda x: scaled(scale, x, 2).value)(3.0)) == 12.0
    assert not any(store.iterdir())


def test_what_the_key_cannot_name_is_not_stored(store, monkeypatch):
    """A class from outside difimpact and its libraries (a user's own model), a lambda or a local function in
    the static part: the plain call, nothing stored; and the store off, nothing stored."""
    _check(scaled(Scale(jnp.asarray(2.0), "positive"), jnp.asarray(3.0), 2), 3.0, 2)  # this module's classes
    assert not any(store.iterdir())
    monkeypatch.setattr(_exported, "_TRUSTED", _exported._TRUSTED | {__name__.partition(".")[0]})

    def local():
        return 0

    for static in (lambda: 0, local, object()):
        with pytest.raises(_exported._Unstorable):
            _exported._text(static)
    monkeypatch.setattr(_exported, "_folder", None)
    _check(scaled(Scale(jnp.asarray(2.0), "positive"), jnp.asarray(3.0), 2), 3.0, 2)
    assert not any(store.iterdir())


def test_switched_by_use_compilation_cache(tmp_path, monkeypatch):
    """`use_compilation_cache` switches the store on in its folder's `exported/` (`programs=False`: off)."""
    suite = jax.config.jax_compilation_cache_dir
    monkeypatch.setattr(_exported, "_folder", _exported._folder)  # the suite's setting, put back afterwards
    try:
        assert di.use_compilation_cache(tmp_path) / "exported" == _exported._folder
        di.use_compilation_cache(tmp_path, programs=False)
        assert _exported._folder is None
        with pytest.raises(TypeError, match="`programs` must be True or False"):
            di.use_compilation_cache(tmp_path, programs="yes")
    finally:
        di.use_compilation_cache(suite)
