"""Periodic gaits: the rimless wheel against McGeer's closed form, Garcia et al.'s simplest walker against the
published fixed point, the energy balance of passive gaits, Floquet multipliers against finite differences and
the saltation-matrix formula, and gradients through the fixed point against re-solved fixed points."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._gait.stride import StanceSystem
from difimpact._models.walker import rolling_stance_accelerations

from .helpers import simplest_walker_gait, simplest_walker_stride

N, L, M, G = 8, 1.0, 1.0, 9.81
ALPHA = np.pi / N
TIGHT = di.StanceTolerances(rtol=1e-12, atol=1e-12)
# Forward-mode tangents of an adaptive solve are not error-controlled: the multiplier's error is ~1e-7 at
# rtol 1e-10, 4e-9 at 1e-12 and 3e-10 at 1e-13.
TIGHTER = di.StanceTolerances(rtol=1e-13, atol=1e-13)


def mcgeer(slope):
    """McGeer (1990): ω⁺ = cot 2α √(4 (g/l) sin α sin γ), multiplier cos² 2α."""
    return 1 / np.tan(2 * ALPHA) * np.sqrt(4 * G / L * np.sin(ALPHA) * np.sin(slope)), np.cos(2 * ALPHA) ** 2


solve = eqx.filter_jit(lambda w, x0, options: di.periodic_gait(w, x0, options=options, throw=False))
jacobian = eqx.filter_jit(lambda w, g, options: di.stride_jacobian(w, g, options=options))


@pytest.fixture(scope="module")
def wheel():
    w = di.RimlessWheel(N, l=L, m=M, g=G, slope=0.08)
    gait = solve(w, jnp.array([1.0]), di.StanceTolerances())
    return w, gait


@pytest.fixture(scope="module")
def simplest():
    w = di.SimplestWalker(0.009)
    return w, solve(w, jnp.array([-0.2, 0.2, 0.016]), di.StanceTolerances())


def test_rimless_wheel_closed_form(wheel):
    w, gait = wheel
    omega, multiplier = mcgeer(0.08)
    assert gait.result == di.GaitResults.successful
    assert abs(gait.x[0] / omega - 1) < 1e-9
    J = jacobian(w, gait, TIGHTER)
    assert abs(J[0, 0] / multiplier - 1) < 1e-9
    balance = gait.energy_loss / (M * G * gait.step_length * np.sin(0.08))
    assert abs(balance - 1) < 1e-9
    assert abs(gait.step_length - 2 * L * np.sin(ALPHA)) < 1e-12


def test_rimless_wheel_falls_back_below_its_minimum_slope():
    """At γ = 0.05 McGeer's ω⁺ = 0.87 rad/s cannot lift the hub over the spoke: the search reports the fall."""
    w = di.RimlessWheel(N, l=L, m=M, g=G, slope=0.05)
    gait = solve(w, jnp.array([mcgeer(0.05)[0]]), di.StanceTolerances())
    assert gait.result == di.GaitResults.fell_backward


def test_simplest_walker_garcia(simplest):
    """Garcia et al. (1998): at γ = 0.009 the long-period gait has θ* = 0.20031, θ̇* = −0.19983."""
    w, gait = simplest
    assert gait.result == di.GaitResults.successful
    assert abs(-gait.x[0] - 0.20031) < 5e-6 and abs(-gait.x[1] - (-0.19983)) < 5e-6
    assert abs(gait.energy_loss / (1.0 * gait.step_length * np.sin(0.009)) - 1) < 1e-9
    refined = solve(w, gait.x, TIGHT)
    np.testing.assert_allclose(refined.x, gait.x, rtol=0, atol=1e-9)


def test_simplest_walker_short_gait_scipy():
    """The short-period gait at γ = 0.009 (scuffing after mid-stance ignored) against an independent
    solve_ivp + fsolve fixed point."""
    w = di.SimplestWalker(0.009)
    gait = solve(w, jnp.array([-0.194, 0.204, 0.015]), TIGHT)
    x, _ = simplest_walker_gait(np.array([-0.194, 0.204, 0.015]), 0.009)
    assert gait.result == di.GaitResults.successful
    np.testing.assert_allclose(gait.x, x, rtol=0, atol=1e-8)
    assert abs(gait.step_time - simplest_walker_stride(x, 0.009)[1]) < 1e-8


def test_compass_stance_closed_form_equals_the_tree():
    """``CompassGait``'s closed-form single support equals the reduced dynamics of its tree,
    ``Bᵀ M B θ̈ = −Bᵀ c`` (:func:`rolling_stance_accelerations`), over parameters, feet and states."""
    rng = np.random.default_rng(0)
    n = 64
    params = dict(l=rng.uniform(0.5, 1.5, n), m=rng.uniform(1, 10, n), b=rng.uniform(0.1, 0.5, n),
                  m_H=rng.uniform(1, 20, n), g=np.full(n, 9.81), slope=rng.uniform(-0.2, 0.2, n))
    params["R"] = rng.uniform(0, 1, n) * params["l"]
    theta, rate = rng.uniform(-1, 1, (n, 2)), rng.uniform(-3, 3, (n, 2))

    def both(p, theta, rate):
        w = di.CompassGait(**p)
        return w.stance_accelerations(theta, rate), rolling_stance_accelerations(w, theta, rate)

    closed, tree = jax.jit(jax.vmap(both))(params, theta, rate)
    np.testing.assert_allclose(closed, tree, rtol=1e-12, atol=1e-12 * np.abs(tree).max())


def _fd_jacobian(w, x, h=1e-5):
    P = eqx.filter_jit(lambda x: di.stride_power(w, x, options=TIGHT))
    cols = [(P(x + h * e) - P(x - h * e)) / (2 * h) for e in np.eye(x.shape[0])]
    return np.stack(cols, axis=1)


def _saltation_jacobian(w, x):
    """Monodromy of the stance flow to the event time (a fixed-time solve), corrected by the saltation formula
    ``(I − f ∂g/∂y / (∂g/∂y f))`` at the event, then the impact-and-swap Jacobian."""
    system = StanceSystem(w)
    tau = w.time_scale
    step = di.stride(w, x, options=TIGHT)
    s_end = step.step_time / tau

    def start(x):
        theta, rate = w.from_section(x)
        return jnp.concatenate([theta, tau * rate])

    def flow(y0):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, a: system.vector_field(t, y, 0)), diffrax.Tsit5(),
                                  0.0, s_end, None, y0, stepsize_controller=diffrax.PIDController(rtol=1e-12, atol=1e-12),
                                  adjoint=diffrax.ForwardMode(), max_steps=100_000)
        return sol.ys[-1]

    def reset(y):
        theta, rate = jnp.split(y, 2)
        q, qdot = jax.jvp(w.stance_configuration, (theta,), (rate / tau,))
        strike = di.heel_strike(w, q, qdot)
        new_theta, new_rate = jax.jvp(w.swap, (theta,), (strike.theta_dot,))
        return w.to_section(new_theta, new_rate)

    y0 = start(x)
    y_minus = flow(y0)
    Phi = jax.jacfwd(flow)(y0)
    f = system.vector_field(0.0, y_minus, 0)
    dg = jax.grad(lambda y: system.event_components(0.0, y, 1)[0])(y_minus)
    S = jnp.eye(y0.shape[0]) - jnp.outer(f, dg) / (dg @ f)
    return jax.jacfwd(reset)(y_minus) @ S @ Phi @ jax.jacfwd(start)(x)


@pytest.mark.slow
def test_multipliers_fd_and_saltation(simplest):
    w, gait = simplest
    J = np.asarray(jacobian(w, gait, TIGHT))
    np.testing.assert_allclose(J, _fd_jacobian(w, gait.x), rtol=0, atol=1e-6 * np.abs(J).max())
    np.testing.assert_allclose(J, np.asarray(_saltation_jacobian(w, gait.x)), rtol=0, atol=1e-7 * np.abs(J).max())
    mult = np.sort_complex(np.asarray(di.eigenvalues(jnp.asarray(J))))
    np.testing.assert_allclose(mult, np.sort_complex(np.linalg.eigvals(J)), atol=1e-10)


@pytest.mark.slow
def test_fixed_point_gradient_vs_resolved(simplest):
    """dx*/dγ and d(speed)/dγ by the implicit-function theorem (forward mode) against central differences of
    fixed points re-solved at γ ± h."""
    _, gait = simplest

    def observe(slope, x0):
        g = di.periodic_gait(di.SimplestWalker(slope), x0, options=TIGHT)
        return jnp.concatenate([g.x, g.speed[None], g.step_time[None]])

    f = eqx.filter_jit(observe)
    d = eqx.filter_jit(jax.jacfwd(observe))(jnp.asarray(0.009), gait.x)
    h = 1e-5
    fd = (f(jnp.asarray(0.009 + h), gait.x) - f(jnp.asarray(0.009 - h), gait.x)) / (2 * h)
    np.testing.assert_allclose(d, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


@pytest.mark.slow
def test_sweep_stability_map_flags_failures():
    """A stability map over slopes with ``sweep`` (the simplest walker: no LAPACK under ``vmap``): uphill
    (γ = −0.01) there is no gait and the member is flagged by its result with finite numbers; the others equal
    the gaits solved one by one."""

    def member(p):
        w = di.SimplestWalker(p["slope"])
        gait = di.periodic_gait(w, jnp.array([-0.2, 0.2, 0.016]), throw=False)
        return dict(x=gait.x, ok=gait.result == di.GaitResults.successful,
                    rho=di.spectral_radius(di.stride_jacobian(w, gait)))

    params, _ = di.grid(slope=np.array([-0.01, 0.009, 0.012]))
    out = di.sweep(member, params, chunk_size=4)
    assert out["ok"].tolist() == [False, True, True]
    assert np.all(np.isfinite(out["x"])) and np.all(np.isfinite(out["rho"]))
    one = solve(di.SimplestWalker(0.012), jnp.array([-0.2, 0.2, 0.016]), di.StanceTolerances())
    np.testing.assert_allclose(out["x"][2], one.x, rtol=0, atol=1e-10)


@pytest.mark.slow
def test_reverse_mode_with_direct_adjoint(simplest):
    """``jax.grad`` of the gait's speed through the fixed point (``DirectAdjoint``) equals forward mode."""
    _, gait = simplest
    options = di.StanceTolerances(adjoint=diffrax.DirectAdjoint(), max_steps=512)

    def speed(slope):
        return di.periodic_gait(di.SimplestWalker(slope), gait.x, options=options).speed

    rev = eqx.filter_jit(jax.grad(speed))(jnp.asarray(0.009))
    fwd = eqx.filter_jit(jax.jacfwd(speed))(jnp.asarray(0.009))
    np.testing.assert_allclose(rev, fwd, rtol=1e-8)


class RestitutionWheel(di.RimlessWheel):
    """The rimless wheel (N = 8, l = 1, m = 1, g = 9.81) with a rate-dependent impact ``ω⁺ = f(ω⁻) = ω⁻ (c + d ω⁻)``,
    ``c = cos² 2α``, in place of the impulsive one (:class:`RestitutionLaw`, registered for it). The stance phase conserves energy,
    ``ω⁻² = ω⁺² + K``, ``K = 4 (g/l) sin α sin γ``, so its gaits satisfy ``K = v² − f(v)²`` (``v = ω⁻``): ``K`` is
    largest where ``f(v) f'(v) = v``, ``v = (√(c² + 8) − 3c) / 4d`` — a fold in the slope, with the multiplier
    ``f'(v) f(v) / v = 1`` there."""

    d: float

    def __init__(self, slope, d=0.15):
        super().__init__(N, l=L, m=M, g=G, slope=slope)
        self.d = d



class RestitutionLaw(di.AbstractHeelStrike):
    """The heel strike of :class:`RestitutionWheel`: ``ω⁺ = ω⁻ (c + d ω⁻)``."""

    def __call__(self, walker, q, qdot):
        w = qdot[2]
        w_plus = w * (np.cos(2 * ALPHA) ** 2 + walker.d * w)
        return di.HeelStrike(w_plus[None], 0.5 * M * L**2 * (w**2 - w_plus**2), w_plus > 0, w_plus,
                             di.ImpactResults.successful)


di.heel_strike_law.register(RestitutionWheel, lambda walker: RestitutionLaw())


def test_heel_strike_laws():
    """Each walker's heel strike is its type's law; the simplest walker's closed form is the limit of
    :func:`impact` (its tree, massless legs kept); the walker's method of 0.1 is removed."""
    assert isinstance(di.heel_strike_law(di.CompassGait()), di.ImpulsiveHeelStrike)
    assert isinstance(di.heel_strike_law(di.SimplestWalker(0.0)), di.MasslessLegsHeelStrike)
    assert isinstance(di.heel_strike_law(RestitutionWheel(0.08)), RestitutionLaw)
    w = di.SimplestWalker(0.0)
    q, qdot = w.stance_configuration(jnp.array([0.3, 0.6])), jnp.array([0.0, 0.0, 0.5, 0.0])
    hs = di.heel_strike(w, q, qdot)
    ref = di.impact(w, q, qdot, stick=("swing_foot",), massless="keep")
    assert abs(hs.energy_loss / ref.loss - 1) < 1e-13
    assert not hasattr(w, "heel_strike")
    with pytest.raises(TypeError, match="`walker`"):
        di.heel_strike_law(di.CrutchWalker())


def test_continuation_passes_a_fold():
    """Pseudo-arclength continuation from the slower gait at γ = 0.08 toward 0.12 turns at the fold and comes back
    on the faster gait: the fold's slope, rate and multiplier, and the faster gait at 0.08, against the closed
    form of :class:`RestitutionWheel`."""
    c, d = np.cos(2 * ALPHA) ** 2, 0.15
    v = (np.sqrt(c**2 + 8) - 3 * c) / (4 * d)
    k = 4 * G / L * np.sin(ALPHA)
    slope_fold = np.arcsin((v**2 - (v * (c + d * v)) ** 2) / k)
    branch = di.continue_gait(RestitutionWheel, [1.25], 0.08, 0.12, step=0.1, bisections=12)
    folds = [b for b in branch if b.kind == "fold"]
    assert len(folds) == 1
    assert abs(folds[0].p - slope_fold) < 1e-9 and abs(folds[0].x[0] - v * (c + d * v)) < 1e-6
    assert abs(folds[0].multipliers[0] - 1) < 1e-6
    # −d² v⁴ − 2 c d v³ + (1 − c²) v² − K = 0: the larger root is the faster gait
    v_fast = max(r.real for r in np.roots([-(d**2), -2 * c * d, 1 - c**2, 0, -k * np.sin(0.08)]) if abs(r.imag) < 1e-12)
    assert branch[-1].p == 0.08 and abs(branch[-1].x[0] - v_fast * (c + d * v_fast)) < 1e-8
    assert max(b.p for b in branch) <= folds[0].p + 1e-12


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="`x`"):
        di.stride(di.SimplestWalker(0.009), jnp.zeros(2))
    with pytest.raises(TypeError, match="`walker`"):
        di.stride(di.CrutchWalker(), jnp.zeros(3))
    with pytest.raises(ValueError, match="`period`"):
        di.periodic_gait(di.SimplestWalker(0.009), jnp.zeros(3), period=0)
    with pytest.raises(ValueError, match="`slope`"):
        di.SimplestWalker(2.0)
    with pytest.raises(ValueError, match="`n_spokes`"):
        di.RimlessWheel(2)
    with pytest.raises(ValueError, match="`period`"):
        di.continue_gait(di.SimplestWalker, jnp.zeros(3), 0.009, 0.01, period=0)
    with pytest.raises(ValueError, match="`p0` and `p1`"):
        di.continue_gait(di.SimplestWalker, jnp.zeros(3), 0.009, 0.009)
    with pytest.raises(ValueError, match="`x0`"):
        di.continue_gait(di.SimplestWalker, jnp.zeros(2), 0.009, 0.01)
    with pytest.raises(TypeError, match="`make_walker`"):
        di.continue_gait(lambda p: di.CrutchWalker(), jnp.zeros(3), 0.009, 0.01)
