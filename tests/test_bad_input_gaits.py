"""Bad input to the optimisers gives a clear error naming the argument before anything is compiled: the
interior-point method's options and problems (:func:`~difimpact.solve_nlp`), the powered bipeds' optimal gaits
and the seven-link human's gaits and tracking reference.

Every case raises in Python at the call (``ValueError``/``TypeError``); none builds a gait problem's program,
so the module runs in seconds. The one compile is of a two-variable problem in float32 (its default `tol`).
The table of these cases is in ``docs/bad-input.md``.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di

NAN = float("nan")


def _rosenbrock(x, p):
    return (x[0] - p) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def _solve(**kwargs):
    return di.solve_nlp(_rosenbrock, jnp.zeros(2), 1.0, **kwargs)


# -- NLPOptions -------------------------------------------------------------------------------------------------

OPTIONS = [
    (dict(tol=-1.0), ValueError, "`tol` must be finite and positive"),
    (dict(tol=0.0), ValueError, "`tol` must be finite and positive"),
    (dict(tol=NAN), ValueError, "`tol` must be finite and positive"),
    (dict(max_steps=0), ValueError, "`max_steps` must be at least 1"),
    (dict(max_steps=2.5), TypeError, "`max_steps` must be an integer"),
    (dict(max_steps=True), TypeError, "`max_steps` must be an integer"),
    (dict(mu_init=0.0), ValueError, "`mu_init` must be finite and positive"),
    (dict(kappa_mu=1.0, theta_mu=1.0), ValueError, r"`kappa_mu` must be finite and in \(0, 1\)"),
    (dict(theta_mu=1.0), ValueError, r"`theta_mu` must be finite and in \(1, 2\)"),
    (dict(theta_mu=2.5), ValueError, r"`theta_mu` must be finite and in \(1, 2\)"),
    (dict(tau_min=1.0), ValueError, r"`tau_min` must be finite and in \(0, 1\)"),
    (dict(bound_push=0.0), ValueError, r"`bound_push` must be finite and in \(0, 0.5\]"),
    (dict(max_gradient=-1.0), ValueError, "`max_gradient` must be finite and positive"),
    (dict(max_backtracks=0), ValueError, "`max_backtracks` must be at least 1"),
    (dict(bound_relax_factor=-1e-8), ValueError, "`bound_relax_factor` must be finite and non-negative"),
    (dict(scale_constraints="yes"), TypeError, "`scale_constraints` must be True or False"),
    (dict(mu_init="0.1"), TypeError, "`mu_init` must be a number"),
]


@pytest.mark.parametrize("kwargs, error, match", OPTIONS, ids=[",".join(c[0]) for c in OPTIONS])
def test_nlp_options_are_checked(kwargs, error, match):
    """Each option out of its range is refused where the options are made (``tol=-1`` and ``kappa_mu = theta_mu
    = 1`` made the solve run forever: the barrier parameter never decreases)."""
    with pytest.raises(error, match=match):
        di.NLPOptions(**kwargs)


def test_nlp_options_accept_numpy_numbers_and_traced_values():
    """NumPy numbers, arrays of options (a batch) and traced options (under ``jit``) are accepted."""
    di.NLPOptions(tol=np.float64(1e-8), max_steps=np.int32(10), bound_relax_factor=jnp.array([0.0, 1e-8]))
    assert jax.jit(lambda r: di.NLPOptions(bound_relax_factor=r).bound_relax_factor)(1e-8) == 1e-8


def test_float32_tol_below_resolution_is_refused_and_the_default_scales():
    """In float32 a `tol` below 10 ε (1e-9 is 100 times below) cannot be met: refused by name before the
    solve; the default (``tol=None``: ``max(1e-9, 100 ε)``) converges on the documented example."""
    x0 = jnp.zeros(2, jnp.float32)
    circle = dict(inequality=lambda x, p: 1.5 - x @ x)
    with pytest.raises(ValueError, match=r"`options.tol` = 1e-09 is below what float32 resolves"):
        di.solve_nlp(_rosenbrock, x0, 1.0, **circle, options=di.NLPOptions(tol=1e-9))
    sol = di.solve_nlp(_rosenbrock, x0, 1.0, **circle)
    assert sol.x.dtype == jnp.float32
    np.testing.assert_allclose(sol.x, [0.9072, 0.8228], atol=2e-4)


# -- solve_nlp --------------------------------------------------------------------------------------------------

PROBLEMS = [
    ("lower-shape", lambda: _solve(lower=jnp.zeros(3)), ValueError,
     r"`lower` must be a scalar or shape \(2,\), got \(3,\)"),
    ("lower-above-upper", lambda: _solve(lower=jnp.array([0.0, 2.0]), upper=1.0), ValueError,
     r"`lower` exceeds `upper` at index 1 \(2 > 1\)"),
    ("upper-nan", lambda: _solve(upper=jnp.array([1.0, NAN])), ValueError, "`upper` is NaN at index 1"),
    ("inequality-bounds-crossed", lambda: _solve(inequality=lambda x, p: x, inequality_lower=1.0,
                                                  inequality_upper=jnp.array([2.0, 0.0])), ValueError,
     r"`inequality_lower` exceeds `inequality_upper` at index 1 \(1 > 0\)"),
    ("inequality_upper-shape", lambda: _solve(inequality=lambda x, p: x, inequality_upper=jnp.ones(3)), ValueError,
     r"`inequality_upper` must be a scalar or shape \(2,\), got \(3,\)"),
    ("objective-vector", lambda: di.solve_nlp(lambda x, p: x**2, jnp.zeros(2)), TypeError,
     r"`objective` must return a scalar f\(x, params\), got shape \(2,\)"),
    ("objective-none", lambda: di.solve_nlp(lambda x, p: None, jnp.zeros(2)), TypeError,
     "`objective` must return a scalar f\\(x, params\\), got NoneType"),
    ("equality-matrix", lambda: _solve(equality=lambda x, p: jnp.outer(x, x)), TypeError,
     r"`equality` must return a vector c\(x, params\).*got shape \(2, 2\)"),
    ("inequality-matrix", lambda: _solve(inequality=lambda x, p: jnp.outer(x, x)), TypeError,
     r"`inequality` must return a vector d\(x, params\).*got shape \(2, 2\)"),
    ("constraints-matrix", lambda: _solve(constraints=lambda x, p: (x[:1], jnp.outer(x, x))), TypeError,
     r"`constraints` must return a vector d\(x, params\).*got shape \(2, 2\)"),
]


@pytest.mark.parametrize("thunk, error, match", [c[1:] for c in PROBLEMS], ids=[c[0] for c in PROBLEMS])
def test_solve_nlp_bad_problem(thunk, error, match):
    """Bounds that cross or of the wrong shape, functions of the wrong output shape: named, before compiling."""
    with pytest.raises(error, match=match):
        thunk()


# -- optimal_gait, kelly_gait, PoweredBiped ---------------------------------------------------------------------

WALKER = di.biped_torso_walker()  # three joints, two actuators; legs of 0.8 m
GUESS = jnp.array([-0.32, -0.64, -0.32])


def _gait(**kwargs):
    return di.optimal_gait(WALKER, GUESS, **{"step_length": 0.5, "step_time": 0.5, **kwargs})


GAITS = [
    ("torque_bounds-crossed", lambda: _gait(torque_bounds=(10.0, -10.0)),
     r"`torque_bounds\[0\]` exceeds `torque_bounds\[1\]` at index 0 \(10 > -10\)"),
    ("time_bounds-crossed", lambda: _gait(step_time=None, speed=1.0, time_bounds=(1.0, 0.1)),
     r"`time_bounds\[0\]` exceeds `time_bounds\[1\]` at index 0 \(1 > 0.1\)"),
    ("angle_bounds-crossed", lambda: _gait(angle_bounds=(jnp.array([0.0, 2.0, 0.0]), 1.0)),
     r"`angle_bounds\[0\]` exceeds `angle_bounds\[1\]` at index 1 \(2 > 1\)"),
    ("angle_bounds-length", lambda: _gait(angle_bounds=(jnp.zeros(2), 1.0)),
     r"`angle_bounds\[0\]` must be a scalar or shape \(3,\), got \(2,\)"),
    ("rate_bounds-crossed", lambda: _gait(rate_bounds=(5.0, -5.0)),
     r"`rate_bounds\[0\]` exceeds `rate_bounds\[1\]` at index 0"),
    ("rate_bounds-length", lambda: _gait(rate_bounds=(-5.0, jnp.ones(4))),
     r"`rate_bounds\[1\]` must be a scalar or shape \(3,\), got \(4,\)"),
    ("torque_bounds-nan", lambda: _gait(torque_bounds=(NAN, 10.0)), r"`torque_bounds\[0\]` is NaN at index 0"),
    ("joint_limits-crossed", lambda: _gait(joint_limits=(("torso", None, 1.0, -1.0),)),
     "`joint_limits lower` exceeds `joint_limits upper` at index 0"),
    ("step_length-beyond-reach", lambda: _gait(step_length=5.0),
     r"`step_length` = 5 m is longer than the walker can span: its feet are at most 1.6 m apart"),
    ("kelly-step_length-beyond-reach", lambda: di.kelly_gait(step_length=5.0),
     r"`step_length` = 5 m is longer than the walker can span: its feet are at most 1.6 m apart"),
]


@pytest.mark.parametrize("thunk, match", [c[1:] for c in GAITS], ids=[c[0] for c in GAITS])
def test_optimal_gait_bad_bounds_and_geometry(thunk, match):
    """Crossed or misshapen bounds, and a step longer than the legs (Kelly's five-link biped and the biped with
    a torso reach 1.6 m): ``ValueError`` naming the argument, before the transcription is compiled."""
    with pytest.raises(ValueError, match=match):
        thunk()


def test_powered_biped_needs_two_feet():
    with pytest.raises(ValueError, match="`stance_foot` and `swing_foot` must be two points, got 'P_R' for both"):
        di.PoweredBiped(di.BipedWithTorso(), "P_R", "P_R", (("torso", "right_leg"), ("left_leg", "torso")),
                        (("right_leg", "left_leg"), ("torso", "torso")))


# -- human_gait, MeasuredGait, human_tracking_gait, gait_agreement ----------------------------------------------

HUMAN = di.SevenLinkHuman()
DURATIONS = ((0.03, 0.25), (0.01, 0.15), (0.05, 0.45), (0.05, 0.35))

HUMAN_GAITS = [
    ("one-pair-crossed", (0.3, 0.1), ValueError,
     r"`duration_bounds` of phase 0 \('double'\): lower 0.3 s exceeds upper 0.1 s"),
    ("one-phase-crossed", DURATIONS[:2] + ((0.5, 0.45),) + DURATIONS[3:], ValueError,
     r"`duration_bounds` of phase 2 \('flat'\): lower 0.5 s exceeds upper 0.45 s"),
    ("two-pairs", DURATIONS[:2], ValueError,
     r"`duration_bounds` must be one \(lower, upper\) pair or 4 of them .* got shape \(2, 2\)"),
    ("triple", (0.1, 0.2, 0.3), ValueError, r"`duration_bounds` must be one \(lower, upper\) pair .* shape \(3,\)"),
    ("negative", (-0.1, 0.2), ValueError, "`duration_bounds` must be finite and positive"),
    ("string", "short", TypeError, "`duration_bounds` must be \\(lower, upper\\) pairs of numbers"),
]


@pytest.mark.parametrize("bounds, error, match", [c[1:] for c in HUMAN_GAITS], ids=[c[0] for c in HUMAN_GAITS])
def test_human_gait_duration_bounds(bounds, error, match):
    with pytest.raises(error, match=match):
        di.human_gait(HUMAN, 1.3, duration_bounds=bounds)


def _measured(**changes):
    w = di.winter_normal()
    fields = dict(mean=w.mean, sd=w.sd, cycle_time=w.cycle_time, cycle_time_sd=w.cycle_time_sd, speed=w.speed)
    return di.MeasuredGait(**{**fields, **changes})


def test_measured_gait_is_checked():
    """Three signal columns instead of five (its ``step`` was ``(6,)`` instead of ``(10,)``), an SD of zero or
    below (the tracking cost divides by it), a non-positive cycle time: refused where it is made."""
    w = di.winter_normal()
    assert _measured().step(0.3)[0].shape == (10,)
    with pytest.raises(ValueError, match=r"`mean` must have shape \(n, 5\).*got shape \(50, 3\)"):
        _measured(mean=w.mean[:, :3], sd=w.sd[:, :3])
    with pytest.raises(ValueError, match=r"`sd` must have the shape of `mean` \(50, 5\), got \(3, 5\)"):
        _measured(sd=w.sd[:3])
    with pytest.raises(ValueError, match=r"`sd` must be positive, got 0 \(sample 4, knee\)"):
        _measured(sd=w.sd.at[4, 1].set(0.0))
    with pytest.raises(ValueError, match="`sd` must be positive, got -"):
        _measured(sd=-w.sd)
    with pytest.raises(ValueError, match="`cycle_time_sd` must be positive, got 0"):
        _measured(cycle_time_sd=0.0)
    with pytest.raises(ValueError, match="`mean` contains NaN or infinite entries"):
        _measured(mean=w.mean.at[0, 0].set(NAN))


def test_tracking_reference_and_agreement_arguments():
    """A string where a reference or a gait belongs: ``TypeError`` naming it (an ``AttributeError`` before)."""
    with pytest.raises(TypeError, match="`reference` must be a MeasuredGait .* got str 'winter'"):
        di.human_tracking_gait(reference="winter")
    with pytest.raises(TypeError, match="`gait` must be a HumanGait .* got str 'gait'"):
        di.gait_agreement("gait")
    with pytest.raises(TypeError, match="`reference` must be a MeasuredGait"):
        di.gait_agreement(_fake_gait(), reference="winter")


def _fake_gait():
    import types

    return types.SimpleNamespace(t=None, q=None, grf=None, problem=None)
