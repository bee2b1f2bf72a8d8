r"""The optimal step replayed: the equations of motion of each phase integrated under the gait's interpolated
torques, through the heel strike and the relabelling, with the actuators' and the contacts' work as extra states.

Along the exact solution of a phase ``\dot E = u · \dot θ + λ · A \dot q`` (``E = T + V``), the second term zero
while the contacts hold at rest; over a periodic step the actuators' work equals the heel strike's loss
(seed 002, eq. 23; Kelly 2017, §7 for the periodic gait). The integrator is a callable
``integrate(rhs, (t0, t1), y0) -> y1`` with ``rhs(t, y)`` a JAX function (tests pass scipy's DOP853,
:func:`diffrax_integrate` is the library's).
"""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

from . import phases as ph
from .phases import N, PHASES


def torque(method: str, t_grid, u, t):
    """The collocation's torque at ``t``: quadratic per Hermite–Simpson segment, linear per trapezoid segment
    (Kelly 2017, eqs. 3.9, 4.10)."""
    T0, T1 = t_grid[0], t_grid[-1]
    if method == "hermite-simpson":
        n = (u.shape[0] - 1) // 2
        h = (T1 - T0) / n
        k = jnp.clip(jnp.floor((t - T0) / h).astype(int), 0, n - 1)
        s = (t - T0 - k * h) / h
        return (2 * (s - 0.5) * (s - 1) * u[2 * k] - 4 * s * (s - 1) * u[2 * k + 1]
                + 2 * s * (s - 0.5) * u[2 * k + 2])
    n = u.shape[0] - 1
    h = (T1 - T0) / n
    k = jnp.clip(jnp.floor((t - T0) / h).astype(int), 0, n - 1)
    s = (t - T0 - k * h) / h
    return u[k] + s * (u[k + 1] - u[k])


def _rhs(human, active, method, t_grid, u):
    def rhs(t, y):
        q, qd = y[:N], y[N:2 * N]
        uu = torque(method, t_grid, u, t)
        qdd, lam, _ = ph.dynamics(human, active, q, qd, uu)
        A = jnp.concatenate([human.contact_jacobian(q, p) for p in ph.FEET]) * active[:, None]
        return jnp.concatenate([qd, qdd, jnp.stack([uu @ qd[3:], lam @ (A @ qd)])])

    return jax.jit(rhs)


def replay(gait, integrate) -> dict:
    """Integrate `gait` (a :class:`~difimpact._human_gait.gait.HumanGait`) from its first state through its phases
    and the heel strike. Returns ``closure`` (max-norm of the relabelled post-impact state minus the first
    state), ``work`` and ``contact_work`` [J] of the integrated step, ``energy_change`` (``E⁻`` at the strike
    minus ``E`` at the start) and ``impact_loss`` [J] of the integrated heel strike."""
    p, human = gait.problem, gait.problem.human
    o = p.offsets
    t, u = np.asarray(gait.t), np.asarray(gait.u)
    y = np.concatenate([np.asarray(gait.q[0]), np.asarray(gait.qdot[0]), [0.0, 0.0]])
    for k, phase in enumerate(PHASES):
        sl = slice(o[k], o[k + 1])
        rhs = _rhs(human, jnp.asarray(ph.mask(phase), float), p.method, jnp.asarray(t[sl]), jnp.asarray(u[sl]))
        y = np.asarray(integrate(rhs, (float(t[sl][0]), float(t[sl][-1])), y))
    q, qd = jnp.asarray(y[:N]), jnp.asarray(y[N:2 * N])
    hit = ph.heel_strike(human, q, qd)
    q0, qd0 = ph.relabel(human, q, hit.qdot_plus)
    start = np.concatenate([np.asarray(gait.q[0]), np.asarray(gait.qdot[0])])
    energy = float(ph.energy(human, q, qd) - ph.energy(human, gait.q[0], gait.qdot[0]))
    return {"closure": float(np.max(np.abs(np.concatenate([q0, qd0]) - start))), "work": float(y[-2]),
            "contact_work": float(y[-1]), "energy_change": energy, "impact_loss": float(hit.loss)}


def diffrax_integrate(rhs, span, y0, rtol=1e-11, atol=1e-11):
    """``y(t1)`` by diffrax's Dopri8 with an adaptive step."""
    term = diffrax.ODETerm(lambda t, y, args: rhs(t, y))
    sol = diffrax.diffeqsolve(term, diffrax.Dopri8(), span[0], span[1], None, jnp.asarray(y0),
                              stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol, dtmin=None),
                              max_steps=100000)
    return np.asarray(sol.ys[-1])
