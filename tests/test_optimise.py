"""The optax driver against a closed-form KKT point, and the worked examples (issue 5, item 3): each converges
from several starts to one optimum, satisfies its constraints and agrees with a brute-force grid search over
the same bounds (tolerance: the grid spacing)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import difimpact as di
from difimpact._autodiff import forward_mode_gradient

from .helpers import run_notebook


def test_minimise_matches_kkt_point():
    """min (x−2)² + (y+1)² + (z−5)² s.t. x − y ≤ 1, z ∈ [0, 3]: the KKT point is (1, 0, 3), λ = 2
    (the unconstrained optimum projected onto x − y = 1; ∇f = −λ∇g)."""
    fn = lambda p: (p["xy"][0] - 2) ** 2 + (p["xy"][1] + 1) ** 2 + (p["z"] - 5) ** 2  # noqa: E731
    g = lambda p: (p["xy"][0] - p["xy"][1] - 1.0)[None]  # noqa: E731
    res = di.minimise(fn, {"xy": jnp.zeros(2), "z": jnp.asarray(1.0)},
                      optimiser=optax.adam(optax.exponential_decay(0.1, 300, 0.05)), steps=300, rounds=6,
                      bounds=({"xy": -10.0, "z": 0.0}, {"xy": 10.0, "z": 3.0}), constraints=g, penalty=10.0)
    np.testing.assert_allclose(res.params["xy"], [1.0, 0.0], atol=1e-5)
    assert res.params["z"] == 3.0  # projection reaches the bound exactly
    np.testing.assert_allclose(res.multipliers, [2.0], atol=1e-4)
    assert res.history_value.shape == (1800,) and res.history_constraints.shape == (1800, 1)


def test_minimise_calls_the_objective_at_one_place():
    """The objective and the constraints are traced once into the program (and once for their shapes): each call
    site of an impact solve inside them would compile apart."""
    traced = {"fn": 0, "g": 0}

    def count(name, f):
        def counted(p):
            traced[name] += 1
            return f(p)
        return counted

    fn = count("fn", lambda p: jnp.sum((p - 2.0) ** 2))
    g = count("g", lambda p: p[:1] - 1.0)
    jax.jit(lambda p: di.minimise(fn, p, optimiser=optax.adam(0.1), steps=5, rounds=3, constraints=g)).lower(
        jnp.zeros(2))
    assert traced == {"fn": 2, "g": 2}


def test_minimise_bad_input():
    opt = optax.sgd(0.1)
    with pytest.raises(ValueError, match="steps"):
        di.minimise(jnp.sum, jnp.zeros(2), optimiser=opt, steps=0)
    with pytest.raises(ValueError, match="penalty"):
        di.minimise(jnp.sum, jnp.zeros(2), optimiser=opt, steps=1, penalty=-1.0)
    with pytest.raises(ValueError, match="lower exceeds upper"):
        di.minimise(jnp.sum, jnp.zeros(2), optimiser=opt, steps=1, bounds=(1.0, 0.0))
    with pytest.raises(ValueError, match="1-D"):
        di.minimise(jnp.sum, jnp.zeros(2), optimiser=opt, steps=1, constraints=jnp.sum)


def _grid_optimum(problem, num, batched=True):
    """Best feasible point of a ``num``-per-axis grid over the bounds, its value, and the spacing."""
    grid = problem.grid_search(num, batched=batched)
    return grid.best, grid.best_value, np.array([a[1] - a[0] for a in grid.axes])


def _solve_from(problem, starts):
    return problem.solve_from(jnp.asarray(starts, float))


def _check_example(problem, starts, num):
    return _check_result(problem, _solve_from(problem, starts), num)


def _check_result(problem, res, num, batched=True, infeasibility=1e-6):
    """`res`: the results from several starts, stacked."""
    x = np.asarray(res.params)
    np.testing.assert_allclose(x, np.broadcast_to(x[0], x.shape), atol=1e-4)  # one optimum from every start
    if problem.constraints is not None:
        assert np.all(np.asarray(res.constraints) <= infeasibility)
    best, f_best, spacing = _grid_optimum(problem, num, batched)
    assert np.all(np.abs(x[0] - best) <= spacing + 1e-12), (x[0], best, spacing)
    assert float(res.value[0]) <= f_best + 1e-9  # no feasible grid point is better
    return res


def test_compass_foot_radius():
    """Both limits active: 2 R q3 = foot length and the travelled distance D = the required progression."""
    problem = di.compass_foot_radius(foot_length=0.25, progression=0.5)
    res = _check_example(problem, [[0.2, 0.45], [0.9, 0.1], [0.6, 0.3]], 41)
    R, q3 = np.asarray(res.params[0])
    np.testing.assert_allclose(2 * R * q3, 0.25, rtol=1e-5)
    np.testing.assert_allclose(2 * (1 - R) * np.sin(q3) + 2 * R * q3, 0.5, rtol=1e-5)
    assert np.all(np.asarray(res.multipliers) > 0)


@pytest.mark.parametrize("lift_off", [0.05, 0.15])
@pytest.mark.slow
@pytest.mark.stage2
def test_biped_torso(lift_off):
    """Seed 003's conclusions come out: the torso aligned with the stance leg (q5 = 0) and, while the lift-off
    margin allows, the heaviest torso (μ_T = 2); a larger margin keeps q5 = 0 and lightens the torso until
    v_Sn⁺ = margin. One start is the massless torso μ_T = 0, a bound where the gradient is the one-sided
    derivative of the limit μ_T → 0⁺."""
    problem = di.biped_torso(lift_off=lift_off)
    res = _check_example(problem, [[0.4, 0.5], [0.1, 1.5], [0.25, 0.2], [0.3, 0.0]], 31)
    q5, mu_T = np.asarray(res.params[0])
    assert q5 == 0.0
    if lift_off == 0.05:
        assert mu_T == 2.0 and float(res.constraints[0, 0]) < 0
    else:
        assert 0.5 < mu_T < 1.5
        np.testing.assert_allclose(res.constraints[0, 0], 0.0, atol=1e-5)


def test_problems_differing_in_parameters_share_programs():
    """The lift-off margin is a leaf of the problem: the second margin's grid search traces nothing (the
    programs of the first, or of ``test_biped_torso`` before it, serve), and the margin still acts: both grids
    give the same ``v_Sn⁺ = margin (1 − g)`` (the constraint of seed 003, eq. 4)."""
    traces = []

    def listener(event, duration, **kwargs):
        if event == "/jax/core/compile/jaxpr_trace_duration":
            traces.append(event)

    first = di.biped_torso(lift_off=0.05).grid_search(31)
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        second = di.biped_torso(lift_off=0.15).grid_search(31)
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert traces == []
    np.testing.assert_allclose(0.15 * (1 - second.constraints), 0.05 * (1 - first.constraints), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_array_equal(second.values, first.values)
    assert not np.array_equal(second.feasible, first.feasible)


@pytest.mark.slow
@pytest.mark.stage2
def test_ankle_blocking():
    """The blocking degree against the closed form of seed 002, eq. 24: ξ is a parabola in the ankle rate with
    its vertex at full blocking, ξ(β) = ξ(1) − (ξ(1) − ξ(0)) (1 − β)², so
    β* = 1 − √((ξ(1) − ξ*)/(ξ(1) − ξ(0)))."""
    target = 0.05
    problem, r_free = di.ankle_blocking(target)
    assert float(r_free) > 0  # the free foot slaps down (plantar flexion: positive, the coordinates are clockwise)
    res = _check_example(problem, [[0.0], [0.5], [0.95]], 101)
    model = di.SevenLinkHuman()
    q, qdot = model.heel_strike_state(-1.0)
    # ξ(β) on the notebook's curve (the same program): its ends are the free and the fully blocked ankle.
    xi = jax.jit(jax.vmap(lambda b: di.energy_index(model, q, qdot, stick=("CAL_R",), unilateral=("MH_L",),
                                                    blocked={"theta_A_R": (1 - b) * r_free})))(jnp.linspace(0.0, 1.0, 41))
    xi = np.asarray(xi)[[0, -1]]
    beta = 1 - math.sqrt((xi[1] - target) / (xi[1] - xi[0]))
    np.testing.assert_allclose(res.params[:, 0], beta, atol=1e-5)


def test_forward_mode_gradient(rng):
    """The crutch example's gradient wrapper (``jax.grad`` answered by ``jax.jacfwd``) against the closed-form
    gradient of ``f = sin(x0) exp(x1) + x0³`` at random points, under ``vmap``, and its value against ``f``."""
    def fn(x):
        return jnp.sin(x[0]) * jnp.exp(x[1]) + x[0] ** 3

    x = jnp.asarray(rng.uniform(-1.0, 1.0, size=(4, 2)))
    value, grads = jax.jit(jax.vmap(jax.value_and_grad(forward_mode_gradient(fn))))(x)
    exact = jnp.stack([jnp.cos(x[:, 0]) * jnp.exp(x[:, 1]) + 3 * x[:, 0] ** 2,
                       jnp.sin(x[:, 0]) * jnp.exp(x[:, 1])], 1)
    np.testing.assert_allclose(grads, exact, rtol=1e-14)
    np.testing.assert_allclose(value, jax.vmap(fn)(x), rtol=1e-15)


@pytest.mark.slow
def test_crutch_peak_force():
    """Compliant objective (forward-mode gradient), impulsive no-sliding constraint; 3 starts (one jit, looped
    over the starts) x 4 rounds x 150 Adam steps. The peak force falls as the
    legs and the torso lean forward (q3, q4 up) and so does the sliding margin: the optimum is the vertex where
    the torso bound q4 = 20° and μ − μ_c = margin are both active. Checked against a 7 x 7 grid (spacing
    3° x 3.3°) and the KKT conditions with central differences. Measured on 2 shared cores: 180 s and 288 s
    (under other load), almost all compiling; 3-6 s of Adam steps per start."""
    problem = di.crutch_peak_force(margin=0.05)
    solve = jax.jit(lambda s: problem.solve(s, learning_rate=0.01, steps=150, rounds=4, penalty=30.0))
    res = [solve(jnp.radians(jnp.array(s))) for s in ([6.0, 8.0], [15.0, 4.0], [20.0, 18.0])]
    res = _check_result(problem, jax.tree.map(lambda *a: jnp.stack(a), *res), 7, batched=False,
                        infeasibility=1e-3)  # μ − μ_c within 5e-5 of the margin
    x, lam = np.asarray(res.params[0]), float(res.multipliers[0, 0])
    assert x[1] == problem.upper[1]
    np.testing.assert_allclose(res.constraints[0, 0], 0.0, atol=1e-3)
    # KKT at the vertex, derivatives by central differences (step 1e-3 rad; the compliant solve runs at
    # rtol 1e-6): ∂f/∂q3 + λ ∂g/∂q3 = 0 with λ > 0, and the bound's multiplier −(∂f/∂q4 + λ ∂g/∂q4) > 0.
    def slope(fn, h=1e-3):
        return np.array([(float(fn(x + h * e)) - float(fn(x - h * e))) / (2 * h) for e in np.eye(2)])

    df, dg = slope(jax.jit(problem.objective)), slope(lambda p: jax.jit(problem.constraints)(p)[0])
    assert lam > 0
    np.testing.assert_allclose(df[0] + lam * dg[0], 0.0, atol=1e-2 * abs(df[0]))
    assert df[1] + lam * dg[1] < 0


@pytest.mark.parametrize("name", ["compass_foot_radius"] + [  # the two longer ones in CI's second stage
    pytest.param(n, marks=[pytest.mark.slow, pytest.mark.stage2]) for n in ("biped_torso", "seven_link_ankle_blocking")])
def test_notebook_runs(name):
    """The example notebook of each problem above runs top to bottom. It solves from the same starts and
    searches the same grids as the tests, and runs after them in this module and in the same process
    (:func:`~tests.helpers.run_notebook`), so it calls the programs they compiled."""
    run_notebook(name)
