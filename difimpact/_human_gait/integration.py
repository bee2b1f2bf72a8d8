r"""What :mod:`.replay` integrates: the seven-link human's equations of motion under the collocation's torques, as
right-hand sides that are modules (their arrays traced, not baked into the program as constants), and the
library's integrator :func:`diffrax_integrate`, whose programs are kept across processes by the program store
(:mod:`difimpact._exported`) where the right-hand side is one of these modules: a later process neither traces nor
compiles them again.

Along the exact solution of a phase ``\dot E = u · \dot θ + λ · A \dot q`` (``E = T + V``); the rates below carry
the actuators' and the contacts' work ``W_u``, ``W_λ`` as extra states, and the duration ``τ`` as a constant one.
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from .._check import checks_as_nan
from .._custom_types import Array, Float
from .._exported import PROGRAM_OPTIONS, stored
from .._models.seven_link_human import SevenLinkHuman
from . import phases as ph
from .phases import N

WIDTH = 2 * N + 3  # Y = (q, q̇, W_u, W_λ, τ)


def torque(method: str, u, s, edges):
    """The collocation's torque at phase time ``s ∈ [0, 1]`` on segments with boundaries `edges` (``n + 1``
    numbers from 0 to 1): quadratic per Hermite–Simpson segment, linear per trapezoid segment (Kelly 2017,
    eqs. 3.9, 4.10)."""
    n = edges.shape[0] - 1
    k = jnp.clip(jnp.searchsorted(edges, s, side="right") - 1, 0, n - 1)
    r = (s - edges[k]) / (edges[k + 1] - edges[k])
    if method == "hermite-simpson":
        return 2 * (r - 0.5) * (r - 1) * u[2 * k] - 4 * r * (r - 1) * u[2 * k + 1] + 2 * r * (r - 0.5) * u[2 * k + 2]
    return u[k] + r * (u[k + 1] - u[k])


def quadratic(c, r):
    """The quadratic through ``c[0], c[1], c[2]`` at ``r = 0, ½, 1`` (Kelly 2017, eq. 4.10)."""
    return 2 * (r - 0.5) * (r - 1) * c[0] - 4 * r * (r - 1) * c[1] + 2 * r * (r - 0.5) * c[2]


def _rate(human, active, y, u):
    """``dY/dt`` of one state ``Y`` (the duration's rate zero) under torques `u` with the contacts `active`."""
    q, qd = y[:N], y[N:2 * N]
    qdd, lam, _ = ph.dynamics(human, active, q, qd, u)
    A = jnp.concatenate([human.contact_jacobian(q, p) for p in ph.FEET]) * active[:, None]
    return jnp.concatenate([qd, qdd, jnp.stack([u @ qd[3:], lam @ (A @ qd)]), jnp.zeros(1, y.dtype)])


class PhaseRate(eqx.Module):
    """``dY/ds`` in one phase's time ``s ∈ [0, 1]`` (``d/ds = τ d/dt``) for a batch of states ``Y`` laid end to
    end, under the phase's torques `u` (its collocation points') on segments with boundaries `edges`."""

    human: SevenLinkHuman
    active: Float[Array, " c"]
    u: Float[Array, "p 6"]
    edges: Float[Array, " e"]
    method: str = eqx.field(static=True)
    __hash__, __eq__ = object.__hash__, object.__eq__  # a function's: an integrator may key its programs by it

    def __call__(self, s, y):
        rate = lambda y: y[-1] * _rate(self.human, self.active, y, torque(self.method, self.u, s, self.edges))
        return jax.vmap(rate)(y.reshape(-1, WIDTH)).reshape(-1)


class SegmentRates(eqx.Module):
    """Every collocation segment's ``dY/dσ`` in its local time ``σ ∈ [0, 1]`` (``d/dσ = τ_p h_j d/dt``, the
    torque the quadratic through its three points' `coeffs`) with its sensitivity ``Φ' = (∂f/∂y) Φ``: the states
    ``(Y_j, Φ_j)`` laid end to end, one segment per row of `masks` (its phase's contacts), `coeffs`, `scale`."""

    human: SevenLinkHuman
    masks: Float[Array, "J c"]
    coeffs: Float[Array, "J 3 6"]
    scale: Float[Array, " J"]
    __hash__, __eq__ = object.__hash__, object.__eq__

    def __call__(self, sigma, y):
        def one(Y, active, c, h):
            f = lambda y: h * y[-1] * _rate(self.human, active, y, quadratic(c, sigma))
            fy, lin = jax.linearize(f, Y[:WIDTH])
            dPhi = jax.vmap(lin, in_axes=1, out_axes=1)(Y[WIDTH:].reshape(WIDTH, WIDTH))
            return jnp.concatenate([fy, dPhi.reshape(-1)])

        Y = y.reshape(self.scale.shape[0], -1)
        return jax.vmap(one)(Y, self.masks, self.coeffs, self.scale).reshape(-1)


_TERM = diffrax.ODETerm(lambda t, y, rhs: rhs(t, y))  # one term: a program per right-hand side, not per call


@stored("human_replay_integration", PROGRAM_OPTIONS)
@eqx.filter_jit
def _dopri8(rhs, y0, s0: float, s1: float, rtol: float, atol: float, max_steps: int):
    """``(y(s1), whether the integration succeeded)``, the model's checks traced as NaN (no host callback)."""
    controller = diffrax.PIDController(rtol=rtol, atol=atol, dtmin=None, norm=optx.max_norm)
    with checks_as_nan():
        sol = diffrax.diffeqsolve(_TERM, diffrax.Dopri8(), s0, s1, None, y0, args=rhs, stepsize_controller=controller,
                                  max_steps=max_steps, throw=False)
    return sol.ys[-1], sol.result == diffrax.RESULTS.successful


def diffrax_integrate(rhs, span, y0, rtol=1e-12, atol=1e-12, max_steps=20000):
    """``y(s1)`` by diffrax's Dopri8 with an adaptive step, its error controlled in the max-norm (every component
    within ``atol + rtol |y|``: the root-mean-square over a batch of segments with their sensitivities would let
    single components err a hundredfold more, and the unstable double support amplifies such an error about 10³
    over a step); non-finite values if it needs more than `max_steps` steps or fails otherwise, a failed check of
    the model included (the signal :func:`~.replay.close` reads)."""
    # the arrays' weak types are part of a stored program's key, and a model's arrays are weakly typed or not by
    # where they came from (a computation of Python numbers, a program's output): made strong, one key per shape
    rhs = jax.tree.map(lambda x: jnp.asarray(x, x.dtype) if eqx.is_array(x) else x, rhs)
    y0 = jnp.asarray(y0, float)
    y, ok = _dopri8(rhs, y0, float(span[0]), float(span[1]), float(rtol), float(atol), int(max_steps))
    return np.asarray(y) if bool(ok) else np.full(np.shape(y0), np.nan)
