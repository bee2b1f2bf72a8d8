r"""The optimal step replayed: the equations of motion of each phase integrated under the gait's interpolated
torques, through the heel strike and the relabelling, with the actuators' and the contacts' work as extra states;
and the step closed exactly (:func:`close`) by shooting.

Along the exact solution of a phase ``\dot E = u · \dot θ + λ · A \dot q`` (``E = T + V``), the second term zero
while the contacts hold at rest; over a periodic step the actuators' work equals the heel strike's loss
(Ros et al. 2015, eq. 23; Kelly 2017, §7 for the periodic gait). Each phase is integrated in its phase time
``s ∈ [0, 1]`` (``d/ds = τ d/dt``, the duration ``τ`` a constant state), so the torque is the collocation's
profile in ``s`` whatever the duration. The integrator is a callable ``integrate(rhs, (s0, s1), y0) -> y1`` with
``rhs(s, y)`` a JAX function (tests pass scipy's DOP853, :func:`diffrax_integrate` is the library's).
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg

from .._check import checks_as_nan
from .._exported import PROGRAM_OPTIONS, stored
from . import phases as ph
from .integration import WIDTH, PhaseRate, SegmentRates, diffrax_integrate  # noqa: F401 - the last re-exported
from .phases import PHASES, N

LANDING = 1  # the phase at whose end the stance foot lands flat (``MH_R`` at rest on the ground)


def _checks_as_nan(fn):
    """`fn` with the model's checks traced as NaN where they fail (:func:`~difimpact._check.checks_as_nan`): the
    programs it compiles hold no host callback, so JAX's persistent cache keeps them for the next process, and a
    failed check reaches :func:`close` as the non-finite values it reads as a failure."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with checks_as_nan():
            return fn(*args, **kwargs)

    return wrapped


@stored("human_replay_landing", PROGRAM_OPTIONS)  # called from Python: its program kept across processes
@eqx.filter_jit
@checks_as_nan()
def _landing(human, Y):
    """``(b, 2)`` height and vertical rate of ``MH_R`` for a batch of states ``Y``."""
    def one(y):
        q, qd = y[:N], y[N:2 * N]
        return jnp.stack([human.tree().point_position(q, "MH_R")[1], human.point_velocity(q, qd, "MH_R")[1]])
    return jax.vmap(one)(Y)


@stored("human_replay_strike", PROGRAM_OPTIONS)
@eqx.filter_jit
@checks_as_nan()
def _strike(human, Y):
    """For a batch of pre-strike states: the relabelled post-impact state ``(b, 18)``, the left heel's height,
    the impact loss and the impulses."""
    def one(y):
        q, qd = y[:N], y[N:2 * N]
        hit = ph.heel_strike(human, q, qd)
        q1, qd1 = ph.relabel(human, q, hit.qdot_plus)
        return (jnp.concatenate([q1, qd1]), human.tree().point_position(q, "CAL_L")[1], hit.loss, hit.impulses,
                ph.energy(human, q, qd))
    return jax.vmap(one)(Y)


class _Step:
    """The gait's step as a map of its start state and phase durations, for a batch of them (the right-hand
    sides built once, so an integrator that compiles them does so once per batch size)."""

    def __init__(self, gait, integrate):
        p = gait.problem
        self.human, self.integrate = p.model, integrate
        o = p.offsets
        u = np.asarray(gait.u)
        edges = [jnp.asarray(np.concatenate([[0.0], np.cumsum(p.widths(k))[:-1], [1.0]])) for k in range(len(PHASES))]
        self.rhs = [PhaseRate(p.model, jnp.asarray(ph.mask(phase), float), jnp.asarray(u[o[k]:o[k + 1]]), edges[k],
                              p.method) for k, phase in enumerate(PHASES)]

    def __call__(self, starts, durations):
        """`starts` ``(b, 18)``, `durations` ``(b, 4)``: ``(Y (b, 21) before the strike, post-impact relabelled
        states (b, 18), landing (b, 2), strike heights (b,), impact losses (b,), impulses (b, 4), E⁻ (b,))``."""
        b = starts.shape[0]
        Y = np.concatenate([starts, np.zeros((b, 3))], axis=1)
        landing = None
        for k, rhs in enumerate(self.rhs):
            Y[:, -1] = durations[:, k]
            Y = np.array(self.integrate(rhs, (0.0, 1.0), Y.reshape(-1)), float).reshape(b, -1)  # a copy
            if k == LANDING:
                landing = np.asarray(_landing(self.human, jnp.asarray(Y)))
        end, strike, loss, impulses, energy = (np.asarray(a) for a in _strike(self.human, jnp.asarray(Y)))
        return Y, end, landing, strike, loss, impulses, energy


@_checks_as_nan
def replay(gait, integrate, start=None, durations=None) -> dict:
    """Integrate `gait` (a :class:`~difimpact._human_gait.gait.HumanGait`) from its first state (or `start`, a
    ``(18,)`` state, with phase `durations`, as :func:`close` returns) through its phases and the heel strike.
    Returns ``closure`` (max-norm of the relabelled post-impact state minus the first state), ``work`` and
    ``contact_work`` [J] of the integrated step, ``energy_change`` (``E⁻`` at the strike minus ``E`` at the
    start), ``impact_loss`` [J] and ``impulses`` of the integrated heel strike, ``landing`` (height and vertical
    rate of ``MH_R`` where the foot lands flat), ``strike`` (the left heel's height at the strike) and
    ``q_minus``, ``qdot_minus`` (the state just before it)."""
    return _replay(_Step(gait, integrate), gait, start, durations)


def _replay(step, gait, start, durations):
    start = np.concatenate([np.asarray(gait.q[0]), np.asarray(gait.qdot[0])]) if start is None else start
    durations = np.asarray(gait.durations) if durations is None else durations
    Y, end, landing, strike, loss, impulses, e_minus = step(start[None], np.asarray(durations)[None])
    e0 = float(ph.energy(step.human, jnp.asarray(start[:N]), jnp.asarray(start[N:])))
    return {"closure": float(np.max(np.abs(end[0] - start))), "work": float(Y[0, 2 * N]),
            "contact_work": float(Y[0, 2 * N + 1]), "energy_change": float(e_minus[0]) - e0,
            "impact_loss": float(loss[0]), "impulses": impulses[0], "landing": landing[0], "strike": float(strike[0]),
            "q_minus": Y[0, :N], "qdot_minus": Y[0, N:2 * N]}


FREE = (0, 1, 3)  # the durations :func:`close` adjusts: double support, heel rocker, forefoot rocker


class _Segments:
    """Every collocation segment of the gait as its own initial-value problem in local time ``σ ∈ [0, 1]``
    (``d/dσ = τ_p h_j d/dt`` for a segment of width ``h_j`` in phase time), integrated together with its sensitivity
    ``Φ = ∂y(1)/∂y(0)`` (``Φ' = (∂f/∂y) Φ``, ``Φ(0) = I``): the multiple-shooting map of :func:`close`."""

    def __init__(self, gait):
        p = gait.problem
        u, o, hs = np.asarray(gait.u), p.offsets, p.method == "hermite-simpson"
        masks, coeffs, scale, self.phase = [], [], [], []
        for k, (phase, n) in enumerate(zip(PHASES, p.segments)):
            uk, h = u[o[k]:o[k + 1]], p.widths(k)
            for j in range(n):  # a trapezoid segment's linear torque is the quadratic through its midpoint
                coeffs.append(uk[2 * j:2 * j + 3] if hs else np.stack([uk[j], (uk[j] + uk[j + 1]) / 2, uk[j + 1]]))
                masks.append(ph.mask(phase))
                scale.append(h[j])
                self.phase.append(k)
        self.phase = np.asarray(self.phase)
        self.rhs = SegmentRates(p.model, jnp.asarray(np.stack(masks), float), jnp.asarray(np.stack(coeffs)),
                                jnp.asarray(scale))
        self.starts = np.asarray([o[k] + (2 if hs else 1) * j for k, n in enumerate(p.segments) for j in range(n)])

    def __call__(self, integrate, X, tau):
        """`X` ``(J, 18)`` segment starts, `tau` ``(J,)`` their phases' durations: ``(Y (J, 21), Φ (J, 21, 21))``
        at their ends (``Y`` with the actuators' and contacts' work over the segment)."""
        J, W = X.shape[0], WIDTH
        Y0 = np.concatenate([X, np.zeros((J, 2)), tau[:, None], np.tile(np.eye(W).reshape(-1), (J, 1))], axis=1)
        Y1 = np.asarray(integrate(self.rhs, (0.0, 1.0), Y0.reshape(-1)), float).reshape(J, -1)
        return Y1[:, :W], Y1[:, W:].reshape(J, W, W)


@checks_as_nan()
def _end(human, x):
    """For one pre-strike state: the relabelled post-impact state, the left heel's height, ``MH_R``'s height and
    vertical rate."""
    q, qd = x[:N], x[N:]
    q1, qd1 = ph.relabel(human, q, ph.heel_strike(human, q, qd).qdot_plus)
    return (jnp.concatenate([q1, qd1]), human.tree().point_position(q, "CAL_L")[1][None],
            jnp.stack([human.tree().point_position(q, "MH_R")[1], human.point_velocity(q, qd, "MH_R")[1]]))


_ends = stored("human_replay_ends", PROGRAM_OPTIONS)(eqx.filter_jit(_end))
_ends_jacobian = stored("human_replay_ends_jacobian", PROGRAM_OPTIONS)(eqx.filter_jit(jax.jacfwd(_end, argnums=1)))


def _residual(human, seg, Y, Phi, X, free):
    """Multiple shooting's residual and Jacobian in the unknowns ``(X (J, 18), durations of FREE)``."""
    J, n = X.shape[0], 2 * N
    last, land = J - 1, int(np.flatnonzero(seg.phase == LANDING)[-1])
    ends = lambda j: ([np.asarray(a) for a in _ends(human, jnp.asarray(Y[j, :n]))],
                      [np.asarray(a) for a in _ends_jacobian(human, jnp.asarray(Y[j, :n]))])
    (post, strike, _), (dpost, dstrike, _) = ends(last)
    (_, _, landing), (_, _, dlanding) = ends(land)
    R = np.concatenate([(Y[:-1, :n] - X[1:]).reshape(-1), post - X[0], landing, strike])
    D = np.zeros((R.size, J * n + len(free)))
    for j in range(J):
        S = Phi[j, :n, :n] if j < last else dpost @ Phi[j, :n, :n]
        D[j * n:(j + 1) * n, j * n:(j + 1) * n] = S
        D[j * n:(j + 1) * n, ((j + 1) % J) * n:((j + 1) % J + 1) * n] -= np.eye(n)
        if seg.phase[j] in free:
            dtau = Phi[j, :n, -1] if j < last else dpost @ Phi[j, :n, -1]
            D[j * n:(j + 1) * n, J * n + free.index(seg.phase[j])] = dtau
    for rows, dF, j in ((slice(J * n, J * n + 2), dlanding, land), (slice(J * n + 2, J * n + 3), dstrike, last)):
        D[rows, j * n:(j + 1) * n] = dF @ Phi[j, :n, :n]
        if seg.phase[j] in free:
            D[rows, J * n + free.index(seg.phase[j])] = dF @ Phi[j, :n, -1]
    return R, D


class _Shooting:
    """The multiple-shooting system of :func:`close` as a function of the unknowns ``(X (J, 18), durations)``:
    its residual and Jacobian, or ``None`` where the integrator or a check of the model failed (non-finite values)."""

    def __init__(self, gait, integrate):
        self.human, self.seg, self.integrate, self.free = gait.problem.model, _Segments(gait), integrate, list(FREE)

    def __call__(self, X, d):
        Y, Phi = self.seg(self.integrate, X, d[self.seg.phase])
        if not (np.all(np.isfinite(Y)) and np.all(np.isfinite(Phi))):
            return None
        R, D = _residual(self.human, self.seg, Y, Phi, X, self.free)
        return (R, D) if np.all(np.isfinite(R)) and np.all(np.isfinite(D)) else None  # a failed check: NaN


def _damped(system, X, d, R, D, max_step, min_damping):
    r"""One damped Newton step (Bock 1987, §3.3; Deuflhard 2004, §3.1.3 and NLEQ1's restricted monotonicity test):
    the Newton correction ``Δ = -D^{-1} R``, capped so that no start moves by more than `max_step` (max-norm) and
    no duration by more than half its value, then halved until the simplified correction at the trial point,
    ``\bar Δ = -D^{-1} R(x + α Δ)`` (the same factorisation), has ``‖\bar Δ‖_2 ≤ (1 - α/4) ‖Δ‖_2`` — the natural
    level function, invariant under the residual's scaling (continuity rows in rad/s beside heights in m). A
    failed integration counts as a rejected trial. Returns ``(X, d, R, D, α)``, or ``None`` once ``α`` is below
    `min_damping` times the capped step's."""
    lu = scipy.linalg.lu_factor(D)
    step = scipy.linalg.lu_solve(lu, -R)
    dX, dd = step[:-len(system.free)].reshape(X.shape), step[-len(system.free):]
    alpha = min(1.0, max_step / max(np.max(np.abs(dX)), 1e-300),
                0.5 * float(np.min(d[system.free] / np.maximum(np.abs(dd), 1e-300))))
    norm, smallest = np.linalg.norm(step), alpha * min_damping
    while alpha >= smallest:
        Xt, dt = X + alpha * dX, d.copy()
        dt[system.free] += alpha * dd
        out = system(Xt, dt)
        if out is not None and np.linalg.norm(scipy.linalg.lu_solve(lu, -out[0])) <= (1 - alpha / 4) * norm:
            return Xt, dt, out[0], out[1], alpha
        alpha /= 2
    return None


@_checks_as_nan
def close(gait, integrate, iterations: int = 20, tol: float = 1e-10, max_step: float = 2.0,
          min_damping: float = 2.0**-8, throw: bool = True):
    r"""The periodic step of the gait's torques exactly, by multiple shooting (Bock & Plitt 1984): every
    collocation segment is integrated from its own start ``X_j`` (:class:`_Segments`), and Newton's method on the
    starts and the durations of the phases :data:`FREE` (the flat-foot phase's kept) imposes continuity
    ``y_j(1) = X_{j+1}``, the stance foot landing flat at rest, the left heel on the ground at the strike, and
    periodicity through the heel strike and the relabelling (``18 J + 3`` equations and unknowns), with the exact
    Jacobian from the segments' sensitivities, damped (:func:`_damped`: at most `max_step` per start and
    iteration, halved down to `min_damping` of that). Over one segment the double support's unstable mode (about
    ``e^{40 t}``) grows by less than 3, so the collocated points start Newton where single shooting over the
    whole step (a growth of about 10³) does not. The torques are the collocation's, as functions of phase time.
    The `integrate` callable signals a failure (too many steps) by non-finite values.

    **Returns:** ``(start (18,), durations (4,), info)``, `info` the :func:`replay` dict of the closed step
    integrated from its start in one shot, plus ``result`` (``"successful"`` or why not: raised as a
    ``RuntimeError`` if `throw`), ``newton`` (the residual's max-norm per iteration), ``damping`` (the accepted
    ``α`` per iteration), ``corrections`` (the max-norm distance of the closed orbit's segment starts from the
    collocated points, and of the durations), ``distances`` (that distance per segment start, ``(J,)``) and
    ``position_distance``, ``rate_distance`` (the first over ``q`` alone and over ``\dot q`` alone)."""
    system = _Shooting(gait, integrate)
    Z = np.concatenate([np.asarray(gait.q), np.asarray(gait.qdot)], axis=1)
    X, d0 = Z[system.seg.starts].copy(), np.asarray(gait.durations, float)
    d, out = d0.copy(), system(Z[system.seg.starts], d0)
    result, history, damping = "successful", [], []
    if out is None:
        result = "the integration from the collocated points failed"
    else:
        R, D = out
        history.append(float(np.max(np.abs(R))))
        while history[-1] >= tol:
            if len(damping) == iterations:
                result = f"no convergence in {iterations} iterations"
                break
            step = _damped(system, X, d, R, D, max_step, min_damping)
            if step is None:
                result = (f"no damped step decreased the residual (iteration {len(damping) + 1}, down to "
                          f"{min_damping:g} of the capped step)")
                break
            X, d, R, D, alpha = step
            history.append(float(np.max(np.abs(R))))
            damping.append(alpha)
    if throw and result != "successful":
        raise RuntimeError(f"close: {result}; Newton's residuals {history}")
    info = _replay(_Step(gait, integrate), gait, X[0], d)
    diff = np.abs(X - Z[system.seg.starts])
    info.update(result=result, newton=history, damping=damping, distances=np.max(diff, axis=1),
                corrections=(float(np.max(diff)), float(np.max(np.abs(d - d0)))),
                position_distance=float(np.max(diff[:, :N])), rate_distance=float(np.max(diff[:, N:])))
    return X[0], d, info
