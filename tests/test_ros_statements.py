"""Ros et al. 2015's heel-strike statements around any pre-impact state (seed 002, Figs. 3, 6, 8): the sweeps
around a base state reduce to the experiments' (eq. 3 at the reference posture) and to the base itself at its own
values; the statements there have the experiments' outcomes; they run around a state that is not eq. 3's.

The sweeps go through the experiments' compiled impact (one compilation, shared with ``test_heelstrike_seed002``)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from difimpact.papers.ros_2015 import fig3, fig6, fig8, paper
from difimpact.papers.ros_2015 import heel_strikes as s2
from difimpact.papers.ros_2015 import statements as rs

N = 9  # the quick batch size
OMEGA0 = np.linspace(-1.0, 1.0, N)
DTHETA = np.radians(np.linspace(-20.0, 20.0, N))
QUANTITIES = ("xi", "T_minus", "Tc_minus", "Ta_minus", "Tc_plus", "vn_heel", "Pn_heel", "Pn_trailing")


def _quiet(iterable, **_):
    return iterable


@pytest.fixture(scope="module")
def default():
    """Ros et al. 2015's reference state: the default posture, eq. 3's velocities at ω0 = −1 rad/s."""
    return tuple(np.asarray(a) for a in s2.paper_human().heel_strike_state(-1.0))


@pytest.fixture(scope="module")
def other():
    """Not eq. 3's: another posture and push-off, then hip, knee and torso rates that eq. 3 holds at zero."""
    q, qd = (np.asarray(a) for a in s2.paper_human().heel_strike_state(-0.5, 0.1))
    return q, qd + np.array([0.0, 0.0, 0.05, 0.2, 0.0, 0.0, -0.1, 0.3, 0.0])


@pytest.mark.parametrize("omega0, dtheta", [(OMEGA0, 0 * OMEGA0), (np.full(N, -1.0), DTHETA), (OMEGA0, DTHETA)],
                         ids=["push-off", "torso", "both"])
def test_states_at_the_reference_are_eq3(default, omega0, dtheta):
    # the states of the experiments' sweeps: eq. 3 re-solved at each (ω0, θ), the torso about the hips
    q, qd = rs.around(*default)(omega0, dtheta)
    q_ref, qd_ref = s2._states()(omega0, dtheta)
    np.testing.assert_allclose(q, q_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(qd, qd_ref, rtol=0, atol=1e-12)


def test_states_around_another_eq3_state():
    # eq. 3 is linear in ω0 at a fixed posture, so the slope at the base carries it over the whole range
    human = s2.paper_human()
    base = tuple(np.asarray(a) for a in human.heel_strike_state(0.5, -0.2))
    q, qd = rs.around(*base)(OMEGA0, 0 * OMEGA0)
    np.testing.assert_allclose(qd, [human.heel_strike_state(w, -0.2)[1] for w in OMEGA0], rtol=0, atol=1e-12)
    q, qd = rs.around(*base)(np.full(N, 0.5), DTHETA)
    for i, d in enumerate(DTHETA):
        np.testing.assert_allclose(q[i], human.heel_strike_state(0.5, -0.2 + d)[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(qd[i], human.heel_strike_state(0.5, -0.2 + d)[1], rtol=0, atol=1e-12)


def test_sweeps_at_the_reference_are_the_experiments(default):
    for name, blocked in paper.CASES.items():
        for omega0, dtheta in ((OMEGA0, 0.0), (-1.0, DTHETA)):
            ours = s2._sweep(blocked, omega0, dtheta, 0.0, states=rs.around(*default))
            ref = s2._sweep(blocked, omega0, dtheta, 0.0)
            for k in QUANTITIES:
                np.testing.assert_allclose(ours[k], ref[k], rtol=1e-12, atol=1e-14, err_msg=f"{name}: {k}")
            np.testing.assert_array_equal(ours["outcome"], ref["outcome"])


@pytest.mark.parametrize("base", ["default", "other"])
def test_the_base_itself(base, request):
    # at its own push-off and torso angle the sweep is the base state, bit for bit
    q0, qd0 = request.getfixturevalue(base)
    q, qd = rs.around(q0, qd0)(np.array([-qd0[8], -qd0[8]]), np.zeros(2))
    np.testing.assert_array_equal(q, [q0, q0])
    np.testing.assert_array_equal(qd, [qd0, qd0])
    # the torso turns about the hips: they keep their height, the legs their places relative to them
    q, _ = rs.around(q0, qd0)(np.full(N, -qd0[8]), DTHETA)
    points = _points(np.concatenate([q0[None], q]))
    np.testing.assert_allclose(points[1:, 0, 1], points[0, 0, 1], rtol=0, atol=1e-12)
    legs = points[:, 1:] - points[:, :1]
    np.testing.assert_allclose(legs[1:], np.broadcast_to(legs[0], legs[1:].shape), rtol=0, atol=1e-12)


def _points(q):
    """H_R, CAL_R and MH_L in each configuration of `q`, ``(n, 3, 2)``."""
    human = s2.paper_human()
    return np.asarray(jax.jit(jax.vmap(lambda a: jnp.stack([human.point(a, p) for p in ("H_R", "CAL_R", "MH_L")])))(q))


@pytest.fixture(scope="module")
def at_default(default):
    return rs.statements_at(*default, "default posture", quick=True)


def test_statements_at_the_reference_are_the_experiments(at_default):
    ref = (fig3._pushoff_checks(*fig3._pushoff_sweeps(True, _quiet))
           + fig6._torso_checks(*fig6._torso_sweeps(True, _quiet))
           + fig8._ankle_checks(fig8._ankle_sweeps(True, _quiet)))
    assert len(at_default) == len(ref) == 34
    assert [c.statement for c in at_default] == [c.statement for c in ref]
    assert [c.paper for c in at_default] == [c.paper for c in ref]
    assert [c.ok for c in at_default] == [c.ok for c in ref]
    assert all(c.ours.startswith("[Fig. ") and " at default posture, ω0 = -1.00 rad/s] " in c.ours
               for c in at_default)


def test_statements_around_another_state(at_default, other):
    checks = rs.statements_at(*other, "other", quick=True)
    assert [c.statement for c in checks] == [c.statement for c in at_default]
    assert all(" at other, ω0 = -0.50 rad/s] " in c.ours for c in checks)
    # eq. 24 holds around any state: ξ a parabola in the ankle rate, maximum at total blocking
    parabolas = [c for c in checks if "parabola" in c.statement]
    assert len(parabolas) == 3 and all(c.ok for c in parabolas)
    text = rs.table({"default posture": at_default, "other": checks})
    lines = text.splitlines()
    assert lines[0] == "| Fig. | statement | default posture | other |" and len(lines) == 2 + 34 + 1
    assert lines[2].startswith("| Fig. 3 | Nothing blocked: very low dissipation | ✓ 2.1 % | ")
    assert lines[-1] == (f"| | **statements that hold** | {sum(c.ok for c in at_default)}/34 | "
                         f"{sum(c.ok for c in checks)}/34 |")
    assert all(line.count(" | ") == 3 for line in lines[2:-1])  # cells' own bars are escaped


def test_table_needs_the_same_statements(at_default):
    with pytest.raises(ValueError, match="not the statements"):
        rs.table({"a": at_default, "b": at_default[1:]})


def test_no_heel_strike_is_an_error(default):
    q0, qd0 = default
    with pytest.raises(ValueError, match="backwards: not a heel strike; no heel strike at ω0 = 1 rad/s"):
        rs.statements_at(q0, -qd0, "backwards", quick=True)


def test_a_figure_without_heel_strikes_is_not_evaluated(at_default):
    # the whole body rising at 0.9 m/s: the heel still strikes at the base (ω0 = 1 rad/s) but no longer at the
    # strong push-off end of Fig. 3's range, ω0 = −1 rad/s, where it would come down slower than the body rises
    q0, qd0 = (np.asarray(a) for a in s2.paper_human().heel_strike_state(1.0))
    checks = rs.statements_at(q0, qd0 + 0.9 * np.eye(9)[1], "rising", quick=True)
    assert [c.statement for c in checks] == [c.statement for c in at_default]
    fig3 = [c for c in checks if c.ours.startswith("[Fig. 3 ")]
    fig8 = [c for c in checks if c.ours.startswith("[Fig. 8 ")]
    assert len(fig3) == 12 and len(fig8) == 11
    assert all(not c.ok and "] not evaluated: no heel strike at ω0 = -1 rad/s, Δθ = 0°" in c.ours for c in fig3)
    assert not any("not evaluated" in c.ours for c in fig8) and all(c.ok for c in fig8 if "parabola" in c.statement)
    lines = rs.table({"rising": checks}).splitlines()
    assert lines[2].startswith("| Fig. 3 | Nothing blocked: very low dissipation | — no heel strike at ω0 = -1 rad/s")
    skipped = sum("] not evaluated: " in c.ours for c in checks)
    assert skipped >= 12 and lines[-1].endswith(f"/34 ({skipped} not evaluated) |")
