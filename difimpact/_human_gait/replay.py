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

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from . import phases as ph
from .phases import PHASES, N

LANDING = 1  # the phase at whose end the stance foot lands flat (``MH_R`` at rest on the ground)


def torque(method: str, u, s):
    """The collocation's torque at phase time ``s ∈ [0, 1]``: quadratic per Hermite–Simpson segment, linear per
    trapezoid segment (Kelly 2017, eqs. 3.9, 4.10)."""
    n = (u.shape[0] - 1) // 2 if method == "hermite-simpson" else u.shape[0] - 1
    k = jnp.clip(jnp.floor(s * n).astype(int), 0, n - 1)
    r = s * n - k
    if method == "hermite-simpson":
        return 2 * (r - 0.5) * (r - 1) * u[2 * k] - 4 * r * (r - 1) * u[2 * k + 1] + 2 * r * (r - 0.5) * u[2 * k + 2]
    return u[k] + r * (u[k + 1] - u[k])


def _rhs(human, active, method, u):
    """``dY/ds`` of ``Y = (q, q̇, W_u, W_λ, τ)``."""

    def rhs(s, y):
        q, qd, tau = y[:N], y[N:2 * N], y[-1]
        uu = torque(method, u, s)
        qdd, lam, _ = ph.dynamics(human, active, q, qd, uu)
        A = jnp.concatenate([human.contact_jacobian(q, p) for p in ph.FEET]) * active[:, None]
        return tau * jnp.concatenate([qd, qdd, jnp.stack([uu @ qd[3:], lam @ (A @ qd)]), jnp.zeros(1, y.dtype)])

    return rhs


@eqx.filter_jit
def _landing(human, Y):
    """``(b, 2)`` height and vertical rate of ``MH_R`` for a batch of states ``Y``."""
    def one(y):
        q, qd = y[:N], y[N:2 * N]
        return jnp.stack([human.tree().point_position(q, "MH_R")[1], human.point_velocity(q, qd, "MH_R")[1]])
    return jax.vmap(one)(Y)


@eqx.filter_jit
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


def _batched(rhs):
    def f(s, y):
        Y = y.reshape(-1, 2 * N + 3)
        return jax.vmap(rhs, in_axes=(None, 0))(s, Y).reshape(-1)
    return f


class _Step:
    """The gait's step as a map of its start state and phase durations, for a batch of them (the right-hand
    sides built once, so an integrator that compiles them does so once per batch size)."""

    def __init__(self, gait, integrate):
        p = gait.problem
        self.human, self.integrate = p.human, integrate
        o = p.offsets
        u = np.asarray(gait.u)
        self.rhs = [_batched(_rhs(p.human, jnp.asarray(ph.mask(phase), float), p.method,
                                  jnp.asarray(u[o[k]:o[k + 1]]))) for k, phase in enumerate(PHASES)]

    def __call__(self, starts, durations):
        """`starts` ``(b, 18)``, `durations` ``(b, 4)``: ``(Y (b, 21) before the strike, post-impact relabelled
        states (b, 18), landing (b, 2), strike heights (b,), impact losses (b,), impulses (b, 4), E⁻ (b,))``."""
        b = starts.shape[0]
        Y = np.concatenate([starts, np.zeros((b, 3))], axis=1)
        landing = None
        for k, rhs in enumerate(self.rhs):
            Y[:, -1] = durations[:, k]
            Y = np.asarray(self.integrate(rhs, (0.0, 1.0), Y.reshape(-1)), float).reshape(b, -1)
            if k == LANDING:
                landing = np.asarray(_landing(self.human, jnp.asarray(Y)))
        end, strike, loss, impulses, energy = (np.asarray(a) for a in _strike(self.human, jnp.asarray(Y)))
        return Y, end, landing, strike, loss, impulses, energy


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


def close(gait, integrate, iterations: int = 10, tol: float = 1e-11, eps: float = 1e-7):
    """The periodic step of the gait's torques exactly: Newton's method (finite-difference Jacobian) on the
    start state and the durations of the phases :data:`FREE` (the flat-foot phase's is kept) so that the
    integrated step lands the stance foot flat at rest, strikes with the left heel on the ground and returns
    through the heel strike to its start (21 equations, 21 unknowns). From the collocation's solution the
    correction is of the order of its discretisation error. Returns ``(start (18,), durations (4,), info)``,
    `info` the :func:`replay` dict at the closed step plus ``corrections`` (max-norm of the start's and the
    durations' changes) and ``newton`` (the residual's max-norm per iteration)."""
    step = _Step(gait, integrate)
    start0 = np.concatenate([np.asarray(gait.q[0]), np.asarray(gait.qdot[0])])
    d0 = np.asarray(gait.durations, float)

    def unpack(v):
        d = d0.copy()
        d[list(FREE)] = v[2 * N:]
        return v[:2 * N], d

    def residual(V):
        V = np.atleast_2d(V)
        S, D = zip(*(unpack(v) for v in V))
        S, D = np.stack(S), np.stack(D)
        _, end, landing, strike, *_ = step(S, D)
        return np.concatenate([end - S, landing, strike[:, None]], axis=1)

    v = np.concatenate([start0, d0[list(FREE)]])
    r = residual(v)[0]
    history = [float(np.max(np.abs(r)))]
    for _ in range(iterations):
        if history[-1] < tol:
            break
        R = residual(np.concatenate([v[None], v + eps * np.eye(v.size)]))  # one batched integration
        r, J = R[0], (R[1:] - R[0]).T / eps
        v = v - np.linalg.lstsq(J, r, rcond=None)[0]
        r = residual(v)[0]
        history.append(float(np.max(np.abs(r))))
    s, d = unpack(v)
    info = _replay(step, gait, s, d)
    info.update(newton=history, corrections=(float(np.max(np.abs(s - start0))), float(np.max(np.abs(d - d0)))))
    return s, d, info


_TERM = diffrax.ODETerm(lambda t, y, rhs: rhs(t, y))  # one term: a program per right-hand side, not per call


def diffrax_integrate(rhs, span, y0, rtol=1e-11, atol=1e-11):
    """``y(s1)`` by diffrax's Dopri8 with an adaptive step."""
    sol = diffrax.diffeqsolve(_TERM, diffrax.Dopri8(), span[0], span[1], None, jnp.asarray(y0), args=rhs,
                              stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol, dtmin=None),
                              max_steps=100000)
    return np.asarray(sol.ys[-1])
