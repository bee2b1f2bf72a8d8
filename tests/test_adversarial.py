"""Adversarial families (issue 35, item 3): each public surface fed out-of-range options or extreme values ends in a
clear error naming the argument or in a correct result, for inputs drawn anew each run of the family.

- gaits: `StanceTolerances`, `periodic_gait`, `continue_gait` options out of range, before anything compiles;
  `eigenvalues` at any scale; walkers far outside the mass range; reverse mode with the forward-mode adjoint;
  a compass walker whose swing foot never collides, as a flagged result;
- impacts: `frictional_impact_map` on random mass matrices and velocities at scales 1e-100…1e100 and
  μ up to 1e300 (energy balance, friction cone, and ``mu_stick`` against the regime); `compliant_impact` options
  that no dtype resolves or no memory holds;
- drivers: `sweep` with non-numeric leaves, `minimise` with a line-search optimiser, `impulse_space_path` of
  batched results.

One compiled program per family (vmapped over its draws); the float32 checks run in a subprocess (slow).
"""

import math
import pathlib
import subprocess
import sys

import diffrax
import equinox as eqx
import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import given

import difimpact as di

NAN, INF = float("nan"), float("inf")
BAD_TOLERANCES = st.sampled_from([-1.0, 0.0, NAN, INF, -INF, -1e-300])


# -- gaits: options ---------------------------------------------------------------------------------------------


@given(field=st.sampled_from(["rtol", "atol", "t_max"]), value=BAD_TOLERANCES)
def test_stance_tolerances_refuse_out_of_range_values(field, value):
    with pytest.raises(ValueError, match=f"`StanceTolerances.{field}`"):
        di.StanceTolerances(**{field: value})


@given(value=st.floats(1.0, 1e300))
def test_stance_rtol_of_one_or_more_is_refused(value):
    with pytest.raises(ValueError, match="`StanceTolerances.rtol` must be below 1"):
        di.StanceTolerances(rtol=value)


@pytest.mark.parametrize("options", [dict(max_steps=0), dict(max_steps=2.5), dict(adjoint="forward")])
def test_stance_tolerances_refuse_bad_limits(options):
    with pytest.raises((ValueError, TypeError), match=f"`StanceTolerances.{next(iter(options))}`"):
        di.StanceTolerances(**options)


@given(name=st.sampled_from(["rtol", "atol"]), value=BAD_TOLERANCES)
def test_periodic_gait_refuses_bad_newton_tolerances(name, value):
    with pytest.raises(ValueError, match=f"`{name}`"):
        di.periodic_gait(di.SimplestWalker(), jnp.array([-0.2, 0.2, 0.016]), **{name: value})


@given(step=st.sampled_from([0.0, -0.0, NAN, INF, -INF]))
def test_continue_gait_refuses_a_step_it_cannot_take(step):
    with pytest.raises((ValueError, TypeError), match="`step`"):
        di.continue_gait(di.SimplestWalker, np.array([-0.2, 0.2, 0.016]), 0.009, 0.01, step=step)


@pytest.mark.parametrize("options, name", [(dict(min_step=0.0), "min_step"), (dict(max_step=NAN), "max_step"),
                                           (dict(step=1e-3, min_step=1e-2), "min_step"),
                                           (dict(max_points=1), "max_points"), (dict(bisections=-1), "bisections")])
def test_continue_gait_refuses_inconsistent_steps(options, name):
    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        di.continue_gait(di.SimplestWalker, np.array([-0.2, 0.2, 0.016]), 0.009, 0.01, **options)


@pytest.mark.parametrize("call", [
    lambda o: di.periodic_gait(di.SimplestWalker(), jnp.array([-0.2, 0.2, 0.016]), options=o),
    lambda o: di.continue_gait(di.SimplestWalker, np.array([-0.2, 0.2, 0.016]), 0.009, 0.01, options=o),
])
@pytest.mark.parametrize("options", [None, 1e-10, {"rtol": 1e-10}, di.StanceTolerances])
def test_gait_options_must_be_stance_tolerances(call, options):
    with pytest.raises(TypeError, match="`options` must be an instance of StanceTolerances"):
        call(options)


@given(scale=st.sampled_from([1e61, 1e100, 1e300, 1e-62, 1e-200]))
def test_walkers_far_outside_the_mass_range_are_told_to_scale(scale):
    walker = di.CompassGait(R=0.0, m=5 * scale, m_H=10 * scale, slope=math.radians(3.0))
    with pytest.raises(ValueError, match="total mass must lie within .* scale the masses"):
        di.stride(walker, jnp.array([-0.27, 1.09, 0.72]))


def test_reverse_mode_with_the_forward_adjoint_names_the_adjoint_to_use():
    """The default ``ForwardMode`` adjoint cannot be transposed: ``jax.grad`` says which adjoint to use (raised
    while tracing the transpose, so nothing compiles)."""
    x = jnp.array([-0.2, 0.2, 0.016])
    with pytest.raises(RuntimeError, match=r"DirectAdjoint\(\)"):
        jax.grad(lambda s: di.stride(di.SimplestWalker(s), x).step_time)(0.009)


# -- gaits: eigenvalues at any scale ----------------------------------------------------------------------------

_eigenvalues = jax.jit(jax.vmap(lambda a, s: di.eigenvalues(a * s) / s))


def test_eigenvalues_are_scale_free():
    """Random 1×1…3×3 matrices times 10^k, k in −300…300: the moduli (and values) of ``λ(s a) / s`` agree with
    LAPACK's on ``a``, where Cardano's formula unscaled overflows (1e110) or underflows (1e-110)."""
    rng = np.random.default_rng()
    for k in (1, 2, 3):
        a = rng.normal(size=(64, k, k))
        s = 10.0 ** rng.integers(-300, 300, size=64).astype(float)
        ours = np.sort_complex(np.asarray(_eigenvalues(jnp.asarray(a), jnp.asarray(s))))
        ref = np.sort_complex(np.linalg.eigvals(a))
        np.testing.assert_allclose(np.sort(np.abs(ours)), np.sort(np.abs(ref)), rtol=1e-7, atol=1e-12)


# -- gaits: flagged, not raised ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_compass_walker_whose_foot_never_collides_is_flagged():
    """``R = l``: the swing foot's arc is centred on the hip and never approaches the ground; with ``throw=False``
    the search returns a failed result (the batch goes on), not an error from inside the heel strike."""
    gait = di.periodic_gait(di.CompassGait(R=1.0), jnp.array([-0.27, 1.09, 0.72]), throw=False)
    assert gait.result != di.GaitResults.successful


_FLOAT32 = """
import json, jax.numpy as jnp, math, difimpact as di
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact
walker = di.SimplestWalker(0.009)
gait = di.periodic_gait(walker, jnp.array([-0.2, 0.2, 0.016]))
crutch = di.CrutchWalker()
q, qdot = crutch.pre_impact_state(math.radians(12.0), -0.2)
tip = tip_contact()
laws = dict(normal=tip.normal_law, friction=tip.friction_law)
hit = di.compliant_impact(crutch, q, qdot, "Q", **laws)
try:
    di.compliant_impact(crutch, q, qdot, "Q", **laws, rtol=1e-8)
    refused = ""
except ValueError as err:
    refused = str(err)
print(json.dumps({"dtype": str(gait.x.dtype), "gait": bool(gait.result == di.GaitResults.successful),
                  "x": [float(v) for v in gait.x], "P_n": float(hit.normal_impulse[0]), "refused": refused}))
"""


@pytest.mark.slow
def test_float32_documented_examples():
    """Without x64: the simplest walker's documented gait is found (the heel-strike ground check scales with the
    dtype's ε), the compliant phase runs at its float32 defaults, and a float64 tolerance is refused by name."""
    import json

    done = subprocess.run([sys.executable, "-c", _FLOAT32], capture_output=True, text=True, timeout=600,
                          cwd=pathlib.Path(__file__).parents[1])
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["dtype"] == "float32" and out["gait"]
    np.testing.assert_allclose(out["x"][:2], [-0.200311, 0.199832], rtol=1e-3)  # Garcia et al. 1998
    assert out["P_n"] == pytest.approx(14.409, rel=1e-3)
    assert "`rtol`" in out["refused"] and "float32" in out["refused"]


# -- impacts ----------------------------------------------------------------------------------------------------


@jax.jit
def _frictional(M, a_n, a_t, qdot, mu):
    return jax.vmap(lambda *a: di.frictional_impact_map(*a, throw=False))(M, a_n, a_t, qdot, mu)


def _draws(rng, n, size, mass_scale, speed_scale):
    L = rng.normal(size=(n, size, size))
    M = (L @ np.swapaxes(L, 1, 2) + 0.1 * np.eye(size)) * mass_scale[:, None, None]
    a_n, a_t = rng.normal(size=(n, size)), rng.normal(size=(n, size))
    qdot = rng.normal(size=(n, size))
    vn = np.einsum("ij,ij->i", a_n, qdot)
    qdot -= ((vn + np.abs(rng.normal(size=n)) + 0.1) / np.einsum("ij,ij->i", a_n, a_n))[:, None] * a_n
    return M, a_n, a_t, qdot * speed_scale[:, None]


def test_frictional_map_at_extreme_scales_and_friction():
    """Mass matrices × 10^±100, velocities × 10^±100, μ from 0 to 1e300: every impact that succeeds balances
    its works against ΔT (to 1e-9 of T⁻, and the smallest normal number: XLA flushes subnormal ones), keeps
    |P_t| ≤ μ P_n, stops the approach (v_n⁺ = 0 to 1e-9 of |v⁻|), and ends stuck exactly when μ ≥ mu_stick; the
    others are flagged ``nonfinite``, never NaN in a success. A fresh draw each run: a failure names its seed."""
    seed = np.random.SeedSequence().entropy
    rng = np.random.default_rng(seed)
    n = 256
    mass_scale = 10.0 ** rng.uniform(-100, 100, n)
    speed_scale = 10.0 ** rng.uniform(-100, 100, n)
    M, a_n, a_t, qdot = _draws(rng, n, 3, mass_scale, speed_scale)
    mu = np.where(rng.random(n) < 0.2, 10.0 ** rng.uniform(0, 300, n), rng.uniform(0, 2, n))
    mu[:4] = [0.0, 1e300, 1e150, 1e-300]
    r = _frictional(*(jnp.asarray(v) for v in (M, a_n, a_t, qdot, mu)))
    ok = np.asarray(r.result == di.FrictionalImpactResults.successful)
    failed = ~ok & np.asarray(r.result != di.FrictionalImpactResults.nonfinite)
    assert not failed.any(), (seed, [(i, mass_scale[i], speed_scale[i], mu[i]) for i in np.flatnonzero(failed)])
    assert ok.mean() > 0.9, seed
    t_minus, t_plus = (0.5 * np.einsum("ni,nij,nj->n", v, M, v) for v in (qdot, np.asarray(r.qdot_plus)))
    dT = np.asarray(r.normal_work + r.tangential_work)
    floor = 4 * np.finfo(np.float64).tiny
    np.testing.assert_array_less(np.abs(dT - (t_plus - t_minus))[ok], (1e-9 * t_minus + floor)[ok], f"seed {seed}")
    pn, pt = np.asarray(r.normal_impulse), np.asarray(r.tangential_impulse)
    with np.errstate(over="ignore"):  # μ P_n may overflow to inf: inside the cone all the same
        assert np.all(pn[ok] >= 0) and np.all(np.abs(pt[ok]) <= mu[ok] * pn[ok] * (1 + 1e-9))
    vn = np.einsum("ij,ij->i", a_n, np.asarray(r.qdot_plus))
    scale = np.linalg.norm(qdot, axis=1) * np.linalg.norm(a_n, axis=1)
    np.testing.assert_array_less(np.abs(vn)[ok], 1e-9 * scale[ok], f"seed {seed}")
    stuck = np.isin(r.regime_name, ("stick", "slide-stick"))
    margin = mu - np.asarray(r.mu_stick)
    clear = ok & (np.abs(margin) > 1e-9 * np.maximum(1.0, mu))  # off the boundary, where rounding decides
    np.testing.assert_array_equal(stuck[clear], (margin >= 0)[clear], f"seed {seed}")


@pytest.mark.parametrize("mu", [0.4, 1e200])
def test_frictional_map_keeps_its_digits_near_the_underflow(mu):
    """Masses × 2⁻³³⁰ and speeds × 2⁻³³⁰ (T⁻ ≈ 10⁻²⁹⁸, impulses ≈ 10⁻¹⁹⁹), with μ = 10²⁰⁰ (slides of impulse
    ≈ 10⁻¹² P_n): the map is homogeneous (Font-Llagunes et al. 2012, eqs. 17–22 are linear in q̇⁻ and in M), so
    q̇⁺ scales with the speeds, impulses with both, works with M q̇²; every product along the way stays normal."""
    rng = np.random.default_rng(3)
    one = np.ones(256)  # the shapes of the test above: its program
    M, a_n, a_t, qdot = _draws(rng, 256, 3, one, one)
    m = s = 2.0 ** -330
    unit = _frictional(*(jnp.asarray(v) for v in (M, a_n, a_t, qdot, mu * one)))
    tiny = _frictional(*(jnp.asarray(v) for v in (M * m, a_n, a_t, qdot * s, mu * one)))
    assert np.all(np.asarray(tiny.result == di.FrictionalImpactResults.successful))
    np.testing.assert_allclose(tiny.qdot_plus / s, unit.qdot_plus, rtol=1e-12, atol=0)
    for name in ("normal_impulse", "tangential_impulse", "switch_impulse"):
        np.testing.assert_allclose(getattr(tiny, name) / (m * s), getattr(unit, name), rtol=1e-12, err_msg=name)
    floor = 4 * np.finfo(np.float64).tiny / (m * s * s)  # a work below the normal range is flushed to zero
    for name in ("normal_work", "tangential_work"):
        np.testing.assert_allclose(getattr(tiny, name) / m / s / s, getattr(unit, name), rtol=1e-12, atol=floor,
                                   err_msg=name)
    t_minus, t_plus = (0.5 * np.einsum("ni,nij,nj->n", v, M * m, v) for v in (qdot * s, np.asarray(tiny.qdot_plus)))
    np.testing.assert_allclose(tiny.normal_work + tiny.tangential_work, t_plus - t_minus, rtol=1e-9,
                               atol=floor * m * s * s)


def test_frictional_map_reports_phase_slopes_beyond_the_range():
    """Masses × 2⁻¹⁰¹⁵ with μ = 10²⁰⁰: the impulses and works are representable, but the phases' slopes
    ``dq̇/dP_n`` (∝ 1/M, which :meth:`~difimpact.FrictionalImpactSolution.at` and the impulse-space path use) are
    beyond the largest float: reported as ``nonfinite`` (raised with `throw`), never a successful result whose
    ``at`` is NaN; with μ = 0.75 they are within range and the result stands."""
    walker = di.CrutchWalker()
    q, qdot = walker.pre_impact_state(math.radians(12.0), -0.2)
    M, J = walker.mass_matrix(q) * 2.0**-1015, walker.tree().point_jacobian(q, "Q")
    fine = di.frictional_impact_map(M, J[1], J[0], qdot * 2.0**40, 0.75, throw=False)
    assert fine.result == di.FrictionalImpactResults.successful
    assert np.all(np.isfinite(fine.at(fine.normal_impulse)[0]))
    steep = di.frictional_impact_map(M, J[1], J[0], qdot * 2.0**40, 1e200, throw=False)
    assert steep.result == di.FrictionalImpactResults.nonfinite
    with pytest.raises(eqx.EquinoxRuntimeError, match="phase slopes"):
        di.frictional_impact_map(M, J[1], J[0], qdot * 2.0**40, 1e200)


@given(rtol=st.floats(1e-300, 2e-15))
def test_compliant_refuses_a_tolerance_the_dtype_cannot_reach(rtol):
    crutch = di.CrutchWalker()
    q, qdot = crutch.pre_impact_state(math.radians(12.0), -0.2)
    with pytest.raises(ValueError, match="`rtol` = .* is below what float64 resolves"):
        di.compliant_impact(crutch, q, qdot, "Q", **_tip(), rtol=rtol)


@given(max_steps=st.integers((1 << 23) + 1, 10**12), max_phases=st.integers(2, 64))
def test_compliant_refuses_step_limits_no_memory_holds(max_steps, max_phases):
    crutch = di.CrutchWalker()
    q, qdot = crutch.pre_impact_state(math.radians(12.0), -0.2)
    with pytest.raises(ValueError, match="`max_steps` × `max_phases`"):
        di.compliant_impact(crutch, q, qdot, "Q", **_tip(), max_steps=max_steps, max_phases=max_phases)


def _tip():
    """The laws of seed 000's crutch tip ``Q``, by keyword."""
    from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact

    tip = tip_contact()
    return {"normal": tip.normal_law, "friction": tip.friction_law}


# -- drivers ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("leaf", ["x", b"x", np.array(["a", "b"]), np.array([None, 1], dtype=object)])
def test_sweep_names_a_non_numeric_leaf(leaf):
    with pytest.raises(TypeError, match=r"`params\['b'\]` .* must be a numeric array"):
        di.sweep(lambda p: p["a"], {"a": np.ones(2), "b": leaf})


def test_minimise_with_lbfgs():
    """optax's L-BFGS reads the value and the objective in ``update`` (its zoom line search): it gets the
    augmented Lagrangian's, and solves an inequality-constrained quadratic to the optimum and its multiplier."""
    res = di.minimise(lambda x: jnp.sum((x - jnp.array([1.0, 2.0])) ** 2), jnp.zeros(2), optimiser=optax.lbfgs(),
                      steps=20, rounds=6, penalty=100.0, constraints=lambda x: (x[0] + x[1] - 2.0)[None])
    assert res.result == di.OptimiseResults.successful
    np.testing.assert_allclose(res.params, [0.5, 1.5], atol=1e-8)  # x0 + x1 = 2 active
    np.testing.assert_allclose(res.multipliers, [1.0], atol=1e-8)


def test_impulse_space_path_of_batched_results():
    """A result batched over a 2 × 2 grid gives paths with the grid in front, each the member's own path."""
    crutch = di.CrutchWalker()

    def hit(q3, mu):
        q, qdot = crutch.pre_impact_state(q3, -0.2)
        return di.frictional_impact(crutch, q, qdot, "Q", friction=di.Coulomb(mu))

    q3, mu = jnp.meshgrid(jnp.radians(jnp.array([6.0, 12.0])), jnp.array([0.5, 0.75]), indexing="ij")
    batched = jax.vmap(jax.vmap(hit))(q3, mu)
    path = di.impulse_space_path(batched, num=11)
    assert path.qdot.shape == (2, 2, 11, crutch.n)
    one = di.impulse_space_path(hit(q3[1, 0], mu[1, 0]), num=11)
    np.testing.assert_allclose(path.tangential_work[1, 0], one.tangential_work, rtol=1e-12)


def test_stance_tolerance_traced_is_checked_at_run_time_and_floored():
    """A traced tolerance (a vmapped option) skips the Python check; the integration floors a tiny one at 10 ε
    and raises, naming the option, where a member's is negative or NaN."""
    options = jax.vmap(lambda r: di.StanceTolerances(rtol=r).rtol)(jnp.array([1e-20, 1e-8]))
    assert options.shape == (2,)
    walker, x = di.SimplestWalker(0.009), jnp.array([-0.2, 0.2, 0.016])
    one = jax.jit(jax.vmap(lambda r: di.stride(walker, x, options=di.StanceTolerances(rtol=r), throw=False).step_time))
    times = one(jnp.array([1e-20, 1e-10]))
    np.testing.assert_allclose(times[0], times[1], rtol=1e-8)
    for bad in (-1e-8, jnp.nan):
        with pytest.raises(Exception, match=r"StanceTolerances\.rtol` must be finite and positive and below 1"):
            one(jnp.array([1e-10, bad])).block_until_ready()
    assert isinstance(di.StanceTolerances(adjoint=diffrax.DirectAdjoint()).adjoint, diffrax.DirectAdjoint)
