r"""The cost and the constraints of a step in single support (:mod:`.stance`), as objects.

A running cost gives the integrand ``g(\dot θ, u)`` of the effort ``E = ∫_0^T g\,dt`` (by the mesh's
quadrature); a normalisation divides it (Kelly 2017, eq. 7.1; Srinivasan & Ruina, *Computer
optimization of a minimal biped model discovers walking and running*, Nature 439, 2006):

$$J_{u^2} = \int_0^T \sum_j u_j^2\,dt,\qquad J_{W^+} = \int_0^T \sum_j \max(0, u_j ω_j)\,dt,\qquad
  J = E(T)\ \text{(per step)},\ \frac{E(T)}{L}\ \text{(per distance)},\ \frac{E(T)}{m g L}\ \text{(per transport)},$$

``max(0, ·)`` smoothed as $\tfrac12 (p + \sqrt{p^2 + \varepsilon^2})$. A constraint gives its rows ``d`` with
their bounds ``lo ≤ d ≤ hi`` and the points each row meets (:meth:`footprint`, for :mod:`.stages`), from one
evaluation of the step (:class:`StanceValues`).
"""

import abc
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Float, Scalar
from .._impact.kkt import ImpactSolution


class StanceValues(NamedTuple):
    """What the constraints read: the states at every point (`theta`, `theta_dot` ``(G, j)``), the ground's force
    ``(F_t, F_n)`` on the stance foot ``(G, 2)`` [N] and the heel strike's :class:`~difimpact.ImpactSolution`."""

    theta: Float[Array, "G j"]
    theta_dot: Float[Array, "G j"]
    force: Float[Array, "G 2"]
    impact: ImpactSolution


class AbstractRunningCost(eqx.Module):
    """The integrand ``g`` of the effort, at every point."""

    @abc.abstractmethod
    def running(self, biped, theta_dot, u) -> Float[Array, " G"]:
        """``(G,)`` ``g`` from the rates ``(G, j)`` and the torques ``(G, k)`` [N m]."""


class AbstractNormalisation(eqx.Module):
    """What the effort at the step's end is divided by."""

    @abc.abstractmethod
    def divisor(self, biped, length):
        """The divisor for a step of `length` [m]."""


class AbstractStanceConstraint(eqx.Module):
    """Rows ``lo ≤ d ≤ hi`` of a step in single support."""

    @abc.abstractmethod
    def values(self, biped, v: StanceValues) -> Float[Array, " m"]:
        """``d`` from one evaluation of the step."""

    @abc.abstractmethod
    def bounds(self, G: int, dtype) -> tuple[Float[Array, " m"], Float[Array, " m"]]:
        """``(lo, hi)`` on a mesh of `G` points."""

    @abc.abstractmethod
    def footprint(self, G: int) -> list[tuple[tuple[int, ...], int]]:
        """``(points, count)`` in row order: `count` rows meeting the blocks of `points`."""


class TorqueSquared(AbstractRunningCost):
    r"""$g = \sum_j u_j^2$ [N² m²] (Kelly 2017, eq. 7.1)."""

    def running(self, biped, theta_dot, u) -> Float[Array, " G"]:
        return jnp.sum(u**2, axis=1)


class PositiveWork(AbstractRunningCost):
    r"""$g = \sum_j \tfrac12 (p_j + \sqrt{p_j^2 + \varepsilon^2})$, ``p_j = u_j ω_j`` the actuators' power [W]
    (Srinivasan & Ruina 2006), smoothed by `smoothing` ``ε`` [W]."""

    smoothing: Scalar

    def running(self, biped, theta_dot, u) -> Float[Array, " G"]:
        power = u * jax.vmap(biped.joint_rates)(theta_dot)
        return jnp.sum(0.5 * (power + jnp.sqrt(power**2 + self.smoothing**2)), axis=1)


class PerStep(AbstractNormalisation):
    """The effort of the step itself: divisor ``1``."""

    def divisor(self, biped, length):
        return 1.0


class PerDistance(AbstractNormalisation):
    """The effort per distance: divisor the step length ``L`` [m]."""

    def divisor(self, biped, length):
        return length


class PerTransport(AbstractNormalisation):
    """The cost of transport: divisor ``m g L`` [N m], the walker's weight times the step length."""

    def divisor(self, biped, length):
        tree = biped.model.tree()
        return jnp.sum(tree.mass) * tree.g * length


class AngleLimits(AbstractStanceConstraint):
    """``lower ≤ r_i · θ ≤ upper`` (or on the rates ``θ̇`` with `rates`) at every point, ``r_i`` the rows of
    `rows` ``(l, j)`` (a body's absolute angle, or the angle between two bodies, less its constant offset)."""

    rows: Float[Array, "l j"]
    lower: Float[Array, " l"]
    upper: Float[Array, " l"]
    rates: bool = eqx.field(static=True, default=False)

    def values(self, biped, v: StanceValues):
        return ((v.theta_dot if self.rates else v.theta) @ self.rows.T).reshape(-1)

    def bounds(self, G: int, dtype):
        return jnp.tile(self.lower, G).astype(dtype), jnp.tile(self.upper, G).astype(dtype)

    def footprint(self, G: int):
        return [((p,), self.rows.shape[0]) for p in range(G)]


class StanceFriction(AbstractStanceConstraint):
    """The stance foot's ``F_n ≥ 0`` and friction cone ``|F_t| ≤ μ F_n`` at every point, `friction` ``μ``."""

    friction: Scalar

    def values(self, biped, v: StanceValues):
        F_t, F_n = v.force[:, 0], v.force[:, 1]
        return jnp.concatenate([F_n, self.friction * F_n - F_t, self.friction * F_n + F_t])

    def bounds(self, G: int, dtype):
        return jnp.zeros(3 * G, dtype), jnp.full(3 * G, jnp.inf, dtype)

    def footprint(self, G: int):
        return [((p,), 1) for _ in range(3) for p in range(G)]


class Clearance(AbstractStanceConstraint):
    """The swing foot at least `height` [m] above the ground at the interior points."""

    height: Scalar

    def values(self, biped, v: StanceValues):
        return jax.vmap(biped.swing_foot_position)(v.theta[1:-1])[:, 1]

    def bounds(self, G: int, dtype):
        return jnp.full(G - 2, self.height, dtype), jnp.full(G - 2, jnp.inf, dtype)

    def footprint(self, G: int):
        return [((p,), 1) for p in range(1, G - 1)]


class SwingFootRising(AbstractStanceConstraint):
    """The swing foot's normal velocity ``≥ 0`` at the step's start (Kelly's ``cst_footVel``)."""

    def values(self, biped, v: StanceValues):
        return biped.swing_foot_velocity(v.theta[0], v.theta_dot[0])[1:]

    def bounds(self, G: int, dtype):
        return jnp.zeros(1, dtype), jnp.full(1, jnp.inf, dtype)

    def footprint(self, G: int):
        return [((0,), 1)]


class SwingFootDescending(AbstractStanceConstraint):
    """The swing foot's normal velocity ``≤ 0`` at the step's end: a heel strike, not a foot coming up through
    the ground (Kelly's ``cst_footVel``)."""

    def values(self, biped, v: StanceValues):
        return -biped.swing_foot_velocity(v.theta[-1], v.theta_dot[-1])[1:]

    def bounds(self, G: int, dtype):
        return jnp.zeros(1, dtype), jnp.full(1, jnp.inf, dtype)

    def footprint(self, G: int):
        return [((G - 1,), 1)]


class LiftOff(AbstractStanceConstraint):
    """The trailing foot lifts off at heel strike: its normal velocity just after it $v_{Sn}^+ ≥ 0$ (Font &
    Kövecses 2008, eq. 4)."""

    def values(self, biped, v: StanceValues):
        return biped.lift_off_speed(v.impact)[None]

    def bounds(self, G: int, dtype):
        return jnp.zeros(1, dtype), jnp.full(1, jnp.inf, dtype)

    def footprint(self, G: int):
        return [((G - 1,), 1)]


class PointwiseConstraint(AbstractStanceConstraint):
    """``lower ≤ fn(biped, θ_i, θ̇_i, F_i) ≤ upper`` at every point ``i`` (or at the interior points with
    `interior`), ``fn`` returning ``(r,)`` from one point's joint angles and rates and the ground's force
    ``(F_t, F_n)`` [N] on the stance foot; `lower`, `upper` ``(r,)`` (``±inf`` for a side left free). Its rows meet
    one point each, so its derivatives' structure is known without the user's help: the way to add a path
    constraint of your own to :func:`~difimpact.optimal_gait` (`constraints`).

    **Example:** the hip at least 0.75 m above the ground all along the step,
    ``PointwiseConstraint(lambda b, th, thd, F: b.model.tree().point_position(b.configuration(th), "H")[1:],
    0.75, jnp.inf)``.
    """

    fn: object = eqx.field(static=True)
    lower: Float[Array, " r"]
    upper: Float[Array, " r"]
    interior: bool = eqx.field(static=True, default=False)

    def __init__(self, fn, lower, upper, interior: bool = False):
        if not callable(fn):
            raise TypeError(f"`fn` must be a function (biped, theta, theta_dot, force) -> (r,), got {fn!r}.")
        lo, hi = (jnp.atleast_1d(jnp.asarray(v, float)) for v in (lower, upper))
        if lo.ndim != 1 or hi.ndim != 1:
            raise ValueError(f"`lower` and `upper` must be scalars or (r,), got shapes {lo.shape} and {hi.shape}.")
        lo, hi = jnp.broadcast_arrays(lo, hi)
        concrete = not any(isinstance(v, jax.core.Tracer) for v in (lo, hi))
        if concrete and (bool(jnp.any(jnp.isnan(lo) | jnp.isnan(hi))) or bool(jnp.any(lo > hi))):
            raise ValueError(f"`lower` must be at most `upper` (no NaN), got {lo} and {hi}.")
        if concrete and bool(jnp.any(jnp.isinf(lo) & jnp.isinf(hi))):
            raise ValueError(f"every row needs a finite bound, `lower` or `upper`: got {lo} and {hi}.")
        self.fn, self.lower, self.upper, self.interior = fn, lo, hi, bool(interior)

    def _points(self, G: int) -> range:
        return range(1, G - 1) if self.interior else range(G)

    def values(self, biped, v: StanceValues):
        sl = slice(1, -1) if self.interior else slice(None)
        out = jax.vmap(lambda th, thd, F: jnp.reshape(self.fn(biped, th, thd, F), (-1,)))(
            v.theta[sl], v.theta_dot[sl], v.force[sl])
        if out.shape[1] != self.lower.shape[0]:
            raise ValueError(f"`fn` returned {out.shape[1]} values a point, `lower` and `upper` have "
                             f"{self.lower.shape[0]}.")
        return out.reshape(-1)

    def bounds(self, G: int, dtype):
        k = len(self._points(G))
        return jnp.tile(self.lower, k).astype(dtype), jnp.tile(self.upper, k).astype(dtype)

    def footprint(self, G: int):
        return [((p,), self.lower.shape[0]) for p in self._points(G)]
