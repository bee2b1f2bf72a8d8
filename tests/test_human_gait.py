"""The seven-link human's predicted gait (:func:`difimpact._human_gait.human_gait`) against independent checks: the
phases' dynamics hold their contacts and balance power; the library's optimum of the quick mesh equals IPOPT's
(test-side, CasADi) on the same transcription; IPOPT's optimum of the closure's mesh, closed by multiple shooting
and integrated by scipy's DOP853 under its interpolated torques, returns through the heel strike to its first state,
with the actuators' work equal to the change of mechanical energy and to the impact's loss; the heel strike's
trailing foot stays by the library's unilateral enumeration; and Ros et al.'s blocking cases at the gait's heel strike.

The solves (Hermite–Simpson, 3/2/4/3 segments per phase from the experiment's guess, then the closure's mesh
8/6/4/3 warm-started from it) take minutes of compiling and iterating: the tests that need them are ``slow``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from difimpact import SevenLinkHuman
from difimpact._human_gait import gait as hg
from difimpact._human_gait import phases as ph
from difimpact._human_gait.replay import close
from difimpact.papers.ros_2015 import predicted_gait as experiment

_JIT = {}


class _TooMany(Exception):
    pass


def scipy_integrate(rhs, span, y0, max_evaluations=60000):
    """DOP853 at rtol = atol = 1e-12; non-finite values (``close``'s signal of a failed integration) after
    `max_evaluations` right-hand sides, so that a Newton trial into a stiff region is rejected, not waited for."""
    f = _JIT.setdefault(rhs, jax.jit(rhs))  # one program per right-hand side (and batch size)
    count = [0]

    def g(t, y):
        count[0] += 1
        if count[0] > max_evaluations:
            raise _TooMany
        return np.asarray(f(t, jnp.asarray(y)))

    try:
        sol = solve_ivp(g, span, y0, method="DOP853", rtol=1e-12, atol=1e-12)
    except _TooMany:
        return np.full(np.shape(y0), np.nan)
    return sol.y[:, -1] if sol.success else np.full(np.shape(y0), np.nan)


# The coarsest mesh measured to close (docs/human-gait.md, Checks of the closed step): per phase double, heel,
# flat, toe; equal segments (the quick 3/2/4/3 mesh does not close).
CLOSURE_SEGMENTS, CLOSURE_GRADING = (8, 6, 4, 3), 1.0


def _ipopt_gait(segments, z0, grading=1.0):
    """IPOPT's optimum (casadi: a test-side reference) from `z0`, as a
    :class:`~difimpact._human_gait.gait.HumanGait`."""
    import types

    from .test_human_tracking import _ipopt

    problem = hg.make_problem(SevenLinkHuman(), experiment.SPEED, segments=segments, grading=grading,
                              method="hermite-simpson", friction=0.8, torque_max=300.0, duration_bounds=hg.DURATIONS)
    z, stats = _ipopt(problem, z0(problem), max_iter=500)
    assert stats["success"], stats["return_status"]
    z = jnp.asarray(z)
    sol = types.SimpleNamespace(x=z, value=problem.objective(z), result=None, iterations=stats["iter_count"])
    return hg._gait(problem, sol)


@pytest.fixture(scope="module")
def gait():
    """IPOPT's optimum of the quick mesh from the experiment's guess."""
    return _ipopt_gait(experiment.QUICK_SEGMENTS, lambda problem: hg.initial_guess(problem, 0.7))


@pytest.fixture(scope="module")
def fine_gait(gait):
    """IPOPT's optimum of the closure's mesh, warm-started from the quick one's
    (:func:`~difimpact._human_gait.gait.resample`)."""
    return _ipopt_gait(CLOSURE_SEGMENTS, lambda problem: hg.resample(gait, problem), CLOSURE_GRADING)


@pytest.fixture(scope="module")
def closed(fine_gait):
    return close(fine_gait, scipy_integrate)


def test_phase_dynamics_hold_contacts_and_balance_power():
    """For every phase at a random state: the held rows obey ``A q̈ + Ȧ q̇ = -2α A q̇ - α² (y, 0)``, and the power
    balance ``dE/dt = u·θ̇ + λ·A q̇`` holds (``E = T + V`` differentiated by JAX)."""
    human = SevenLinkHuman()
    rng = np.random.default_rng(1)
    q = jnp.asarray([0.1, 0.9, 0.05, -0.3, 0.2, 0.1, 0.25, 0.3, -0.1]) + 0.01 * rng.standard_normal(9)
    qd, u = jnp.asarray(rng.standard_normal(9)), jnp.asarray(50 * rng.standard_normal(6))

    @jax.jit
    def residuals(active):
        qdd, lam, _ = ph.dynamics(human, active, q, qd, u)
        tree = human.tree()
        kin = [tree.point_kinematics(q, qd, p) for p in ph.FEET]
        A = jnp.concatenate([J[::-1] for _, J, _ in kin])
        bias = jnp.concatenate([b[::-1] for _, _, b in kin])
        _, dE = jax.jvp(lambda x, v: ph.energy(human, x, v), (q, qd), (qd, qdd))
        height = jnp.concatenate([jnp.stack([p[1], 0.0]) for p, _, _ in kin])
        held = A @ qdd + bias + 2 * ph.ALPHA * (A @ qd) + ph.ALPHA**2 * height  # Baumgarte-stabilised rows
        return held * active, dE - u @ qd[3:] - lam @ ((A * active[:, None]) @ qd)

    for phase in ph.PHASES:
        held, power = residuals(jnp.asarray(ph.mask(phase), float))
        assert float(jnp.max(jnp.abs(held))) < 1e-10
        assert abs(float(power)) < 1e-9 * float(jnp.sum(jnp.abs(u)))


@pytest.mark.slow
def test_library_gait_is_ipopts_optimum(gait):
    """The library's solve from the same guess converges to IPOPT's optimum."""
    library = experiment.solve(experiment.QUICK_SEGMENTS)
    assert int(library.result._value) == 0
    assert abs(float(library.cost) / float(gait.cost) - 1) < 1e-6


@pytest.mark.slow
def test_gait_is_a_walk(gait):
    assert 1.3 - 1e-9 < float(gait.speed) < 1.3 + 1e-9
    assert 0.3 < float(gait.step_length) < 1.0
    assert np.all(np.asarray(gait.durations) > 0)
    assert float(jnp.min(gait.grf[:, :, 1])) > -1e-6  # normal forces ≥ 0


@pytest.mark.slow
def test_closure_by_scipy(closed):
    """Multiple shooting over the collocation segments on their starts and three durations
    (:func:`~difimpact._human_gait.replay.close`, integrated by scipy): Newton's residual (continuity, landing flat
    at rest, heel strike on the ground, periodicity) vanishes, and the step integrated in one shot from the closed
    start under the gait's torques returns through the heel strike to it within 1e-5; the durations move by less
    than 0.02 s. The closed orbit's segment starts differ from the collocated points by the mesh's error, on
    8/6/4/3 measured 0.087 (positions, m and rad) and 1.34 (rates, rad/s): bounded here at 0.1 and 1.5."""
    _, _, info = closed
    assert info["result"] == "successful" and info["newton"][-1] < 1e-9
    assert info["position_distance"] < 0.1 and info["rate_distance"] < 1.5
    assert info["closure"] < 1e-5
    assert np.max(np.abs(info["landing"])) < 1e-7 and abs(info["strike"]) < 1e-7
    assert info["corrections"][1] < 0.02


@pytest.mark.slow
def test_quick_mesh_does_not_close_and_says_so(gait):
    """On the quick 3/2/4/3 mesh the collocated step is no near-periodic orbit of its torques (local errors up to
    11 rad/s per segment; Newton's first correction 10² rad/s, the Jacobian's condition 5e6): the damped Newton
    stops with its reason (a few minutes, no integration runs away), and raises it by default."""
    _, _, info = close(gait, scipy_integrate, throw=False)
    assert info["result"].startswith("no damped step") and info["newton"][-1] > 1
    assert all(a < 1 for a in info["damping"])


@pytest.mark.slow
def test_energy_balance_of_the_integrated_step(closed):
    """Along the integrated step the actuators' and contacts' work equal the change of ``T + V`` (to 1e-8), the
    contacts do no work (they hold at rest), and over the closed periodic step the actuators' work equals the heel
    strike's loss (to 1e-6, the closure's residual)."""
    _, _, r = closed
    assert abs(r["work"] + r["contact_work"] - r["energy_change"]) < 1e-8 * abs(r["work"])
    assert abs(r["contact_work"]) < 1e-8 * abs(r["work"])
    assert abs(r["work"] - r["impact_loss"]) < 1e-6 * abs(r["work"])


@pytest.mark.slow
def test_collocated_work_approaches_impact_loss(gait, fine_gait):
    """A periodic step on level ground: net actuator work per step = heel-strike loss. On the mesh (the
    collocation's quadrature of ``u·θ̇``) it holds to the mesh's error, which falls as the mesh closes: measured
    +12.3 % on the quick 3/2/4/3 mesh (which does not close), −2.2 % on 8/6/4/3; the closed step's balance to 1e-8
    is :func:`test_energy_balance_of_the_integrated_step`."""
    quick, fine = (abs(float(g.net_work) / float(g.impact.loss) - 1) for g in (gait, fine_gait))
    assert fine < 0.05 and fine < quick / 3, (quick, fine)


@pytest.mark.slow
def test_continuation_in_speed_stays_on_the_lower_branch():
    """From 1.3 m/s in steps of 0.05 m/s to 1.5 m/s, each solve warm-started from its neighbour's optimum, the
    optimum at 1.5 m/s is at least 15 % cheaper than the one the measured-angle guess leads to (two local optima of
    the transcription; measured 2017 against 2537 N² m s), every solve converges and the costs grow with speed.
    IPOPT from the same warm start (the 1.45 m/s optimum) also stays on the lower branch: measured 1976 N² m s,
    2 % below the library's, another local optimum of that branch reached from the same start."""
    from .test_human_tracking import _ipopt

    human, gaits = SevenLinkHuman(), []
    for v in (1.3, 1.35, 1.4, 1.45, 1.5):
        gaits.append(hg.human_gait(human, v, guess=gaits[-1] if gaits else None))
    cold = hg.human_gait(human, 1.5)
    costs = np.array([float(g.cost) for g in gaits])
    assert np.all(np.diff(costs) > 0) and costs[-1] < 0.85 * float(cold.cost), (costs, float(cold.cost))
    z, stats = _ipopt(gaits[-1].problem, np.asarray(gaits[-2].solution.x), max_iter=500)
    assert stats["success"], stats["return_status"]
    assert float(gaits[-1].problem.objective(jnp.asarray(z))) < 0.85 * float(cold.solution.value)


@pytest.mark.slow
def test_heel_strike_of_the_gait(fine_gait, closed):
    """At the closed step's heel strike: the trailing foot stays (the gait imposes it; the library's unilateral
    enumeration agrees), ξ without blocking is the gait's own impact's, and blocking more leading joints raises ξ
    (Ros et al. §4.3)."""
    _, _, info = closed
    ros = experiment.blocking(fine_gait, info["q_minus"], info["qdot_minus"])
    assert ros["trailing"]["none"] == "stays"
    hit = ph.heel_strike(fine_gait.problem.model, jnp.asarray(info["q_minus"]), jnp.asarray(info["qdot_minus"]))
    assert abs(ros["xi"]["none"] - float(hit.xi)) < 1e-9
    assert ros["xi"]["ankle"] < ros["xi"]["ankle+knee"] < ros["xi"]["ankle+knee+hip"]


@pytest.mark.slow
def test_report_of_the_closed_gait(fine_gait):
    """The experiments' report of a gait (``gait_human.outcome``, on IPOPT's closing-mesh optimum): the closure and
    energy checks pass, the summary row has the issue's keys with ξ from :func:`blocking` at the closed step's heel
    strike, one node row per collocation point, and one statement row per statement of the seed-002 experiments
    (whose default-posture outcomes are those experiments' own)."""
    from difimpact.papers.ros_2015 import statements as ros_statements

    out = experiment.outcome(fine_gait, "predicted gait", True, [], "gait_human_predicted")
    checks = {c.statement[:40]: c.ok for c in out.checks}
    assert all(checks.values()), checks
    (row,) = [r for r in out.rows if r["kind"] == "summary"]
    keys = {"speed", "step_length", "step_time", "cost_of_transport", "xi_none", "xi_ankle", "xi_ankle_knee",
            "xi_ankle_knee_hip", "trailing_foot", "omega0"}
    assert keys <= row.keys() and row["closure"] < 1e-5
    assert sum(r["kind"] == "node" for r in out.rows) == fine_gait.t.shape[0]
    statements = [r for r in out.rows if r["kind"] == "statement"]
    human = experiment.paper_human()
    default = ros_statements.statements_at(*human.heel_strike_state(-1.0), "default", True)
    assert [r["holds_default_posture"] for r in statements] == [c.ok for c in default]


class _Arctan:
    """``R = (arctan x_1, arctan x_2, d - 0.3)``: from ``|x| > 1.39`` full Newton steps diverge (Deuflhard 2004,
    §3.1's example); `fails` beyond ``|x| > 6``, as an integration that runs out of steps."""

    def __init__(self):
        self.free = [0]  # the index of the one 'duration' among the unknowns

    def __call__(self, X, d):
        if np.max(np.abs(X)) > 6:
            return None
        x = X.reshape(-1)
        return np.concatenate([np.arctan(x), d - 0.3]), np.diag(np.concatenate([1 / (1 + x**2), [1.0]]))


def test_damped_newton_converges_where_full_steps_diverge():
    """The damped step of ``close`` (natural monotonicity test, capped step) brings ``arctan`` from x = (3, -5) to
    its root, rejecting trials where the 'integration' fails; full Newton steps from there diverge."""
    from difimpact._human_gait.replay import _damped

    system, X, d = _Arctan(), np.array([[3.0, -5.0]]), np.array([0.2])
    full = 3.0 - np.arctan(3.0) * 10
    assert abs(full) > 3  # a full step overshoots
    R, D = system(X, d)
    alphas = []
    for _ in range(30):
        X, d, R, D, alpha = _damped(system, X, d, R, D, max_step=2.0, min_damping=2.0**-10)
        alphas.append(alpha)
        if np.max(np.abs(R)) < 1e-12:
            break
    assert np.max(np.abs(R)) < 1e-12 and np.max(np.abs(X)) < 1e-12 and abs(d[0] - 0.3) < 1e-12
    assert alphas[0] < 1 and alphas[-1] == 1.0  # damped far away, full steps near the root (quadratic)


def test_close_reports_a_failed_integration():
    """``close`` with an integrator that fails (non-finite values: out of steps) raises with the reason, or with
    ``throw=False`` returns it as its result, instead of iterating."""
    import types

    from difimpact._human_gait.problem import ITAU, B, S, U

    problem = hg.make_problem(SevenLinkHuman(), 1.3, segments=1, method="hermite-simpson", friction=0.8,
                              torque_max=300.0, duration_bounds=hg.DURATIONS)
    Z = hg.initial_guess(problem).reshape(-1, B)
    gait = types.SimpleNamespace(problem=problem, q=Z[:, :9], qdot=Z[:, 9:18], u=U * Z[:, S:],
                                 durations=Z[np.array(problem.offsets[:-1]), ITAU])
    failing = lambda rhs, span, y0: np.full(np.shape(y0), np.nan)
    with pytest.raises(RuntimeError, match="integration from the collocated points failed"):
        close(gait, failing)


def test_graded_mesh_defects_and_quadrature_are_exact_for_cubics():
    """On a graded mesh (``h_j ∝ r^j``) the Hermite–Simpson defects vanish for a cubic and its derivative and the
    weights integrate it exactly (Kelly 2017, §4: the method is exact for cubic states); the widths sum to one
    and shrink towards the phase's start; grading 1 is the equal mesh."""
    from difimpact._human_gait import problem as pb

    problem = hg.make_problem(SevenLinkHuman(), 1.3, segments=(5, 2, 3, 2), grading=(1.4, 1.0, 0.8, 1.0),
                              method="hermite-simpson", friction=0.8, torque_max=300.0, duration_bounds=hg.DURATIONS)
    h = problem.widths(0)
    assert abs(h.sum() - 1) < 1e-15 and np.all(np.diff(h) > 0) and abs(h[1] / h[0] - 1.4) < 1e-12
    assert np.all(problem.widths(1) == 0.5)
    s, w, o = problem.times(), problem.weights(), problem.offsets
    for p in range(4):
        sp = s[o[p]:o[p + 1]]
        x, f = (sp**3 - 2 * sp)[:, None], (3 * sp**2 - 2)[:, None]
        assert np.max(np.abs(np.asarray(pb.defects("hermite-simpson", jnp.asarray(x), jnp.asarray(f),
                                                      problem.widths(p))))) < 1e-14
        assert abs(w[o[p]:o[p + 1]] @ sp**3 - 0.25) < 1e-14
    with pytest.raises(ValueError, match="grading"):
        hg.make_problem(SevenLinkHuman(), 1.3, segments=3, grading=(1.0, -1.0, 1.0, 1.0), method="hermite-simpson",
                        friction=0.8, torque_max=300.0, duration_bounds=hg.DURATIONS)


def test_diffrax_integrate_signals_running_out_of_steps():
    """The library's integrator returns non-finite values (``close``'s signal of a rejected trial) when a stiff
    right-hand side needs more than `max_steps` steps, and the solution otherwise."""
    from difimpact._human_gait.replay import diffrax_integrate

    assert np.allclose(diffrax_integrate(lambda s, y: -y, (0.0, 1.0), np.ones(2)), np.exp(-1.0), atol=1e-10)
    stiff = diffrax_integrate(lambda s, y: -1e6 * (y - jnp.cos(s)), (0.0, 1.0), np.ones(2), max_steps=50)
    assert np.all(np.isnan(stiff))


def test_diffrax_integrate_controls_every_component():
    """The error is controlled per component (max-norm): an oscillator ``ÿ = -400 y`` integrated beside 2000 idle
    states (a batch of segments with their sensitivities, as ``close`` integrates) keeps the accuracy it has alone,
    against ``cos 20`` — a root-mean-square control would let it err about 70 times more (7e-7 at 1e-8)."""
    from difimpact._human_gait.replay import diffrax_integrate

    def error(pad):
        rhs = lambda s, y: jnp.concatenate([jnp.stack([y[1], -400.0 * y[0]]), jnp.zeros(pad)])  # noqa: E731
        y = diffrax_integrate(rhs, (0.0, 1.0), np.concatenate([[1.0, 0.0], np.zeros(pad)]), rtol=1e-8, atol=1e-8)
        return abs(y[0] - np.cos(20.0))

    alone, batched = error(0), error(2000)
    assert batched < 5e-8 and batched < 2 * alone + 1e-12
