"""The entry points compiled by `difimpact._check.program` (the impact maps, the compliant phase, the stride and
the periodic gait) go through the store of `difimpact._exported` when called from Python: with it on, a second
process calls a stored program without tracing the entry point (the function only its trace calls made to raise:
no timing), with the same result bit for bit, and a failure its program flags still raises its message after it.
A program that cannot be exported (a host callback in it) is recorded as such: a second process makes the plain
call at once, without trying to export it again (`test_exported_programs`).

The keys are checked without compiling: a call's key is recorded and the call stopped there."""

import json
import math
import os
import subprocess
import sys

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

import difimpact as di
from difimpact import _exported

from .test_exported_programs import _Recorded, store  # noqa: F401 - `store`: a fixture

pytest.importorskip("flatbuffers", reason="JAX's serialisation of exported programs needs it")

CW = di.CrutchWalker()
Q, QDOT = CW.pre_impact_state(math.radians(12.0), -0.2)
LAW = di.HuntCrossley(di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2), 1e7)
WALKER = di.SimplestWalker(0.009)
X0 = jnp.array([-0.2, 0.2, 0.016])

SCRIPT = """
import importlib, json, math, sys
import equinox as eqx, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
import difimpact as di
from difimpact import _exported
frictional_ground, solve, stride = map(importlib.import_module, (
    "difimpact._impact.frictional_ground", "difimpact._compliant.solve", "difimpact._gait.stride"))
di.use_compilation_cache(sys.argv[1])
exported, export = [], _exported._export
def counted(fn, *args):
    exported.append(fn.__name__)
    return export(fn, *args)
_exported._export = counted
traced_only = (frictional_ground._map, solve.solve_hybrid, stride._integrate)  # each called only by its trace
if sys.argv[2] == "untraced":
    def traced(*args, **kwargs):
        raise AssertionError("an entry point was traced")
    frictional_ground._map = solve.solve_hybrid = stride._integrate = traced
simplest, x0 = di.SimplestWalker(0.009), jnp.array([-0.2, 0.2, 0.016])
walker = di.CrutchWalker()
q, qdot = walker.pre_impact_state(math.radians(12.0), -0.2)
law = di.HuntCrossley(di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2), 1e7)
calls = dict(
    frictional_impact=lambda good: di.frictional_impact(walker, q if good else q.at[1].set(0.1), qdot, "Q",
                                                        friction=di.Coulomb(0.75)),
    compliant_impact=lambda good: di.compliant_impact(walker, q, qdot if good else -qdot, "Q", normal=law,
                                                      friction=di.Coulomb(0.75)),
    stride=lambda good: di.stride(simplest, x0 if good else x0.at[1].set(-0.2)),
)
out = {}
for name, call in calls.items():
    value = call(True)
    out[name] = dict(leaves=[[float(v).hex() for v in x.ravel().tolist()]
                             for x in jax.tree.leaves(eqx.filter(value, eqx.is_array))],
                     structure=str(jax.tree.structure(value)))
    try:
        out[name]["raised"] = call(False) and None
    except eqx.EquinoxRuntimeError as error:
        out[name]["raised"] = str(error)
gait = di.periodic_gait(simplest, x0)  # Newton on the stride map, its Jacobian by forward mode
out["periodic_gait"] = dict(leaves=[float(v).hex() for v in (*gait.x.tolist(), *gait.jacobian.ravel().tolist())])
print(json.dumps(dict(out=out, exported=exported)))
"""

RAISED = {
    "frictional_impact": "point 'Q' is not on the ground",
    "compliant_impact": "starts in contact (δ ≥ 0) but is already separating",
    "stride": "The walker fell back",
}


def _run(folder, mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith((
        "JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "JAX_ENABLE_COMPILATION_CACHE"))}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder), mode], env=env, capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow  # two processes compiling four entry points: CI's second stage keeps the README's 7 minutes
@pytest.mark.stage2
def test_second_process_calls_the_stored_programs(tmp_path):
    """A first process exports and stores the programs of `frictional_impact`, `compliant_impact`, `stride` and
    `periodic_gait` (and the crutch walker's pre-impact state, whose strongly typed outputs give the impact maps'
    calls the same keys in both processes); a second calls the four without tracing them (the functions only their
    traces call raise): the same results bit for bit, the same structures, and each failure flagged by its program
    (a tip above the ground, a contact already separating, a walker falling back) raises its message after the
    stored program."""
    folder = tmp_path / "cache"
    first = _run(folder, "first")
    stored = {p.name: p.stat().st_mtime_ns for p in (folder / "exported").iterdir()}
    # the crutch walker's pre-impact state too (its posture's root find: a program of its own)
    assert sorted(name.rpartition("-")[0] for name in stored) == sorted(
        [*RAISED, "periodic_gait", "crutch_pre_impact_state"]), stored
    assert sorted(first["exported"]) == sorted([*RAISED, "periodic_gait", "_pre_impact_state"])
    second = _run(folder, "untraced")
    assert {p.name: p.stat().st_mtime_ns for p in (folder / "exported").iterdir()} == stored
    assert second["exported"] == []
    assert first["out"] == second["out"]
    for name, message in RAISED.items():
        assert message in (first["out"][name]["raised"] or ""), (name, first["out"][name]["raised"])


@pytest.mark.slow  # two compiles of each program: CI's second stage
@pytest.mark.stage2
def test_stored_program_equals_the_plain_call(store):  # noqa: F811 - the imported fixture
    """The stored program (exported now, and read again as a new process would) returns what the plain call
    returns, bit for bit and with the same structure: a frictional impact, and a stride failed with `throw=False`
    (its result returned, not raised)."""
    calls = (lambda: di.frictional_impact(CW, Q, QDOT, "Q", friction=di.Coulomb(0.75)),
             lambda: di.stride(WALKER, X0.at[1].set(-0.2), throw=False))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_exported, "_folder", None)
        plain = [call() for call in calls]
    exported = [call() for call in calls]
    _exported._programs.clear()
    read = [call() for call in calls]
    assert len(list(store.iterdir())) == 2
    assert read[1].result == di.GaitResults.fell_backward
    for outs in (exported, read):
        for out, reference in zip(outs, plain):
            assert jax.tree.structure(out) == jax.tree.structure(reference)
            assert all(x.dtype == y.dtype and bool(jnp.array_equal(x, y, equal_nan=True))
                       for x, y in zip(jax.tree.leaves(out), jax.tree.leaves(reference)))


def _key(monkeypatch, entry, *args, **kwargs) -> str:
    """The key text of the stored call made by `entry(*args, **kwargs)` (which is then neither traced nor run)."""
    keys = []

    def record(fn, top, name, call_args, call_kwargs, options=None):
        dynamic, static = eqx.partition((call_args, call_kwargs), eqx.is_array)
        arrays, treedef = jax.tree.flatten(dynamic)
        keys.append(_exported._key(name, static, treedef, arrays)[1])  # _Unstorable: not kept
        raise _Recorded

    with monkeypatch.context() as patch:
        patch.setattr(_exported, "_call", record)
        with pytest.raises(_Recorded):
            entry(*args, **kwargs)
    return keys[0]


ENTRY_POINTS = {
    "constrained_impact": lambda: (di.constrained_impact, (CW.mass_matrix(Q), CW.contact_jacobian(Q, "Q"), QDOT),
                                   {}),
    "impact": lambda: (di.impact, (CW, Q, QDOT), dict(stick=("Q",))),
    "frictional_impact": lambda: (di.frictional_impact, (CW, Q, QDOT, "Q"), dict(friction=di.Coulomb(0.75))),
    "pushoff_impact": lambda: (di.pushoff_impact, (di.SimplestWalker(0.0), jnp.array([0.0, 0.0, 0.3, 0.6]),
                                                   jnp.array([0.0, 0.0, 0.5, 0.0]), 0.01), dict(massless="keep")),
    "compliant_impact": lambda: (di.compliant_impact, (CW, Q, QDOT, "Q"), dict(normal=LAW,
                                                                               friction=di.Coulomb(0.75))),
    "stride": lambda: (di.stride, (WALKER, X0), {}),
    "periodic_gait": lambda: (di.periodic_gait, (WALKER, X0), {}),
}


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_every_entry_point_has_a_key(monkeypatch, name):
    """Each entry point's call from Python reaches the store under its own name, with a key: the static part of
    its arguments (models, laws, options) is one the key can name, so the call can be kept."""
    entry, args, kwargs = ENTRY_POINTS[name]()
    assert f"\n{name}\n" in _key(monkeypatch, entry, *args, **kwargs)


def test_key_names_every_static_option(monkeypatch):
    """The same call, the same key; another diffrax solver, adjoint, law, end, option or history, or another
    point's name or shape of the state, another key (another program)."""

    def key(**options):
        return _key(monkeypatch, di.compliant_impact, CW, Q, QDOT, "Q",
                    **{**dict(normal=LAW, friction=di.Coulomb(0.75)), **options})

    base = key()
    assert key() == base
    assert key(normal={"Q": LAW}, friction={"Q": di.Coulomb(0.75)}) == base  # one program for both spellings
    others = [dict(solver=diffrax.Dopri5()), dict(solver=diffrax.Tsit5()), dict(adjoint=diffrax.ForwardMode()),
              dict(friction=None), dict(normal=di.KelvinVoigt(1e7, 1e4)), dict(end="separation"),
              dict(max_steps=100), dict(rtol=1e-6), dict(history=True), dict(throw=False)]
    keys = {key(**other) for other in others}
    assert base not in keys and len(keys) == len(others)
    assert _key(monkeypatch, di.stride, WALKER, X0) != _key(monkeypatch, di.stride, di.CompassGait(),
                                                            jnp.array([-0.27, 1.09, 0.72]))


def test_inside_a_callers_trace_the_plain_call(store):  # noqa: F811 - the imported fixture
    """Inside a caller's `jit` and `grad` (traced, not compiled: `eval_shape`) an entry point is the plain
    call: nothing stored, and a failure is the caller's `error_if`."""

    def impulse(q):
        return di.frictional_impact(CW, q, QDOT, "Q", friction=di.Coulomb(0.75)).normal_impulse

    assert jax.eval_shape(jax.jit(impulse), Q).shape == ()
    assert jax.eval_shape(jax.grad(impulse), Q).shape == Q.shape
    assert not any(store.iterdir())
