"""The optimal gaits' top-level programs, which JAX's persistent compilation cache can keep: JAX stores no program
with a host callback, and `equinox.error_if` is one. Called from Python, `optimal_gait` (and `kelly_gait`, which
calls it) checks its inputs before its program and raises a failed solve after it; inside a caller's own `jit`,
`vmap` or `grad` the failure is raised by `error_if` in the caller's program. A second process finds the program
in the cache (JAX's cache hit, not a timing).

The smallest problem (the biped with a torso on two segments) is compiled once, in the first of two processes;
the other checks lower it or compile nothing."""

import json
import math
import os
import subprocess
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

import difimpact as di
from difimpact._powered import optimal

from ._programs import host_callbacks

A = math.asin(0.25 / 0.8)  # legs of 0.8 m, a step of 0.5 m: the stance leg's angle
GUESS = jnp.array([-A, -2 * A, -A])
SMALL = dict(step_length=0.5, step_time=0.5, segments=2)
ITERATION_LIMIT = r"iteration limit \(`max_steps`\)"


class _Handed(Exception):
    pass


def _handed(monkeypatch, **kwargs):
    """The arguments that `optimal_gait` hands its program (which is neither lowered nor run)."""
    seen = []

    def intercept(*args):
        seen.append(args)
        raise _Handed

    with monkeypatch.context() as patch:
        patch.setattr(optimal, "_solve", intercept)
        with pytest.raises(_Handed):
            di.optimal_gait(di.biped_torso_walker(), GUESS, **SMALL, **kwargs)
    return seen[0]


def test_one_program_whatever_throw(monkeypatch):
    """`throw` is applied after the program: both values hand it the same arguments (one program, one cache
    entry)."""
    raising, returning = (_handed(monkeypatch, throw=throw) for throw in (True, False))
    assert jax.tree.structure(raising) == jax.tree.structure(returning)
    assert bool(eqx.tree_equal(raising, returning))


def test_top_level_program_holds_no_host_callback(monkeypatch):
    """The program of a call from Python (for either `throw`, the same one) lowered, not compiled: no host
    callback in it."""
    text = optimal._solve.lower(*_handed(monkeypatch)).as_text()
    assert host_callbacks(text) == 0


@pytest.mark.slow  # traces the seven-link human's transcription (about 20 s on 2 cores)
def test_human_gait_program_holds_no_host_callback(monkeypatch):
    """The program of `human_gait` called from Python (one segment per phase), lowered: no host callback in it
    (the model's finiteness and LDLᵀ pivot checks are NaN there, which the solve reports)."""
    from difimpact._collocation import solve
    from difimpact._human_gait import gait as human

    seen = []

    def intercept(*args):
        seen.append(args)
        raise _Handed

    monkeypatch.setattr(human, "solve_problem", intercept)
    with pytest.raises(_Handed):
        di.human_gait(di.SevenLinkHuman(), 1.3, segments=1)
    assert host_callbacks(solve.solve_problem.lower(*seen[0]).as_text()) == 0


def test_bounds_checked_before_the_program(monkeypatch):
    """A bound that was a run-time check inside the program is refused in Python before it: an inequality (here
    a joint limit) with no finite bound."""
    monkeypatch.setattr(optimal, "_solve", lambda *args: pytest.fail("the program was called"))
    with pytest.raises(ValueError, match="every inequality needs a finite bound"):
        di.optimal_gait(di.biped_torso_walker(), GUESS, **SMALL, joint_limits=(("torso", None, -jnp.inf, jnp.inf),))


class _Solved(eqx.Module):
    result: di.NLPResults


def test_failure_raised_after_the_program_and_in_a_callers_program():
    """`throw=True`: a failed result raises its message in Python where it is concrete, and through `error_if`
    where it is traced (the call inside the caller's `jit`); success, or `throw=False`, returns the gait."""
    failed, solved = _Solved(di.NLPResults.iteration_limit), _Solved(di.NLPResults.successful)
    with pytest.raises(eqx.EquinoxRuntimeError, match=ITERATION_LIMIT):
        optimal.raise_if_failed(failed, True)
    assert optimal.raise_if_failed(failed, False) is failed
    assert optimal.raise_if_failed(solved, True) is solved
    traced = eqx.filter_jit(lambda gait: optimal.raise_if_failed(gait, True).result == di.NLPResults.successful)
    assert bool(traced(solved))
    with pytest.raises(eqx.EquinoxRuntimeError, match=ITERATION_LIMIT):
        traced(failed).block_until_ready()


SCRIPT = """
import json, logging, math, sys
import equinox as eqx, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
import difimpact as di
messages = []
handler = logging.Handler()
handler.emit = lambda record: messages.append(record.getMessage())
logger = logging.getLogger("jax._src.compiler")
logger.setLevel(logging.DEBUG)
logger.addHandler(handler)
di.use_compilation_cache(sys.argv[1])
a = math.asin(0.25 / 0.8)

def gait(max_steps, throw=True):  # the iteration limit an array: one program for both limits
    return di.optimal_gait(di.biped_torso_walker(), jnp.array([-a, -2 * a, -a]), step_length=0.5, step_time=0.5,
                           segments=2, options=di.NLPOptions(max_steps=jnp.asarray(max_steps)), throw=throw)

solved = gait(300)
out = dict(cost=float(solved.cost), solved=bool(solved.result == di.NLPResults.successful),
           hits=sum("cache hit for 'jit__solve'" in m for m in messages))
out["returned"] = bool(gait(1, throw=False).result == di.NLPResults.iteration_limit)
try:
    gait(1)
    out["raised"] = None
except eqx.EquinoxRuntimeError as error:
    out["raised"] = str(error)
print(json.dumps(out))
"""


@pytest.mark.slow  # two processes, one compile each (about 40 s): in .ci/run's second stage
def test_second_process_loads_the_gait_program(tmp_path):
    """A first process compiles the program of `optimal_gait` called from Python and stores it; a second finds
    it (a cache hit) and stores nothing new. Both raise the failed solve (the iteration limit, with the same
    program) with its message."""
    folder = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith((
        "JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "JAX_ENABLE_COMPILATION_CACHE"))}

    def run():
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder)], env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.splitlines()[-1])

    first = run()
    stored = sorted(p.name for p in folder.glob("jit__solve-*"))
    assert len(stored) == 1, sorted(p.name for p in folder.iterdir())
    second = run()
    assert (first["hits"], second["hits"]) == (0, 1)
    assert sorted(p.name for p in folder.glob("jit__solve-*")) == stored
    assert first["cost"] == second["cost"] > 0
    for done in (first, second):
        assert done["solved"] and done["returned"]
        assert done["raised"] == di.NLPResults[di.NLPResults.iteration_limit]
