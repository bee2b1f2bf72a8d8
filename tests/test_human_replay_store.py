"""The seven-link human's replay integrations (:mod:`difimpact._human_gait.integration`) go through the program
store: their right-hand sides are modules whose arrays are traced, so that a program is traced once per shape and
read from the store by a later process, with the same result bit for bit as the plain call; a plain function as
the right-hand side (a user's) is the plain call, never stored.

The reference is the plain call (the store off); the integration's accuracy against scipy's is tested with the
gait in `tests/test_human_gait.py`."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from difimpact import SevenLinkHuman, _exported
from difimpact._human_gait import integration
from difimpact._human_gait import phases as ph

from .test_exported_programs import store  # noqa: F401 - a fixture

pytest.importorskip("flatbuffers", reason="JAX's serialisation of exported programs needs it")

HUMAN = SevenLinkHuman()


def _rate(u_scale: float) -> integration.PhaseRate:
    """The flat-foot phase's rate under smooth torques on three Hermite–Simpson segments."""
    s = np.linspace(0.0, 1.0, 7)[:, None]
    u = u_scale * np.sin(np.pi * s) * np.array([[1.0, -0.5, 0.3, 0.8, 0.2, -0.1]])
    return integration.PhaseRate(HUMAN, jnp.asarray(ph.mask(ph.PHASES[2]), float), jnp.asarray(u),
                                 jnp.linspace(0.0, 1.0, 4), "hermite-simpson")


def _start() -> np.ndarray:
    q = np.array([0.0, 0.9, 0.05, -0.2, 0.1, 0.05, 0.3, 0.2, -0.1])
    return np.concatenate([q, np.zeros(9), [0.0, 0.0, 0.01]])  # (q, q̇, W_u, W_λ, τ): 10 ms of flat foot


def _files(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.slow  # three compiles of an 8-stage Runge–Kutta program of the human: CI's second stage
@pytest.mark.stage2
def test_replay_integration_is_stored_once_per_shape(store, monkeypatch):  # noqa: F811 - the imported fixture
    exports = []
    export = _exported._export
    monkeypatch.setattr(_exported, "_export", lambda fn, *args: exports.append(fn.__name__) or export(fn, *args))
    with monkeypatch.context() as off:
        off.setattr(_exported, "_folder", None)
        plain = integration.diffrax_integrate(_rate(20.0), (0.0, 1.0), _start())
    first = integration.diffrax_integrate(_rate(20.0), (0.0, 1.0), _start())
    assert exports == ["_dopri8"] and [f.rpartition("-")[0] for f in _files(store)] == ["human_replay_integration"]
    np.testing.assert_array_equal(first, plain)
    assert np.all(np.isfinite(first)) and not np.allclose(first[:18], _start()[:18])
    # another right-hand side of the same shapes: the program this process holds, no new export
    other = integration.diffrax_integrate(_rate(-10.0), (0.0, 1.0), _start())
    assert exports == ["_dopri8"] and len(_files(store)) == 1 and not np.allclose(other, first)
    # the same rate with weakly typed arrays (as a model that went through another program may hold): the same key
    weakly = lambda x: jnp.stack([jnp.asarray(float(v)) + 0.0 for v in np.asarray(x)])  # noqa: E731
    weak = jax.tree.map(lambda x: weakly(x) if eqx.is_array(x) and x.ndim == 1 else x, _rate(20.0))
    assert any(x.weak_type for x in jax.tree.leaves(eqx.filter(weak, eqx.is_array)))
    integration.diffrax_integrate(weak, (0.0, 1.0), _start())
    assert exports == ["_dopri8"] and len(_files(store)) == 1
    # a new process: the stored file read, not exported again
    _exported._programs.clear()
    again = integration.diffrax_integrate(_rate(20.0), (0.0, 1.0), _start())
    assert exports == ["_dopri8"]
    np.testing.assert_array_equal(again, plain)
    # a user's right-hand side (a plain function) is the plain call
    y = integration.diffrax_integrate(lambda s, y: -y, (0.0, 1.0), np.ones(2))
    np.testing.assert_allclose(y, np.exp(-1.0), rtol=1e-10)
    assert exports == ["_dopri8"] and len(_files(store)) == 1


def test_replay_ends_stored_and_equal_to_the_plain_call(store, monkeypatch):  # noqa: F811 - the imported fixture
    """The closing's heel strike (`replay._ends`) and its Jacobian are stored programs: exported once, read back
    by a new process (no new export), the same numbers bit for bit as the plain call; the Jacobian agrees with
    central differences of the stored value program."""
    from difimpact._human_gait import replay

    exports = []
    export = _exported._export
    monkeypatch.setattr(_exported, "_export", lambda fn, *args: exports.append(fn.__name__) or export(fn, *args))
    q, qd = HUMAN.heel_strike_state(-1.0)
    x = jnp.concatenate([q, qd])
    with monkeypatch.context() as off:
        off.setattr(_exported, "_folder", None)
        plain = (replay._ends(HUMAN, x), replay._ends_jacobian(HUMAN, x))
    first = (replay._ends(HUMAN, x), replay._ends_jacobian(HUMAN, x))
    assert sorted(f.rpartition("-")[0] for f in _files(store)) == ["human_replay_ends", "human_replay_ends_jacobian"]
    _exported._programs.clear()  # a new process: the files read
    again = (replay._ends(HUMAN, x), replay._ends_jacobian(HUMAN, x))
    assert len(exports) == 2
    for a, b, c in zip(jax.tree.leaves(plain), jax.tree.leaves(first), jax.tree.leaves(again)):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    h = 1e-6
    column = [(np.asarray(replay._ends(HUMAN, x.at[i].add(h))[0]) - np.asarray(replay._ends(HUMAN, x.at[i].add(-h))[0]))
              / (2 * h) for i in (2, 11)]
    np.testing.assert_allclose(np.stack(column, 1), np.asarray(again[1][0])[:, [2, 11]], rtol=1e-5, atol=1e-6)
