r"""One step of a symmetric periodic gait as a nonlinear program: variables, cost and constraints.

The variables are the joint states ``x_i = (θ_i, θ̇_i)`` and torques ``u_i`` at the collocation points
(:mod:`.collocation`) and, with a free step time, ``T``. The step is periodic through the heel-strike map and
the legs' relabelling (:class:`~difimpact.PoweredBiped`): ``θ_0 = R θ_G``,
$\dot\theta_0 = R \dot q^+_\theta (\theta_G, \dot\theta_G)$; the swing foot ends on the ground at the step length. Costs
(Kelly 2017, eq. 7.1; Srinivasan & Ruina, *Computer optimization of a minimal biped model discovers walking and
running*, Nature 439, 2006):

$$J_{u^2} = \int_0^T \sum_j u_j^2\,dt,\qquad J_{W^+} = \int_0^T \sum_j \max(0, u_j ω_j)\,dt,$$

divided by the step length (cost per distance) or by ``m g L`` (cost of transport) on request; ``max(0, ·)`` is
smoothed as $\tfrac12 (p + \sqrt{p^2 + \varepsilon^2})$.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float, Scalar
from .._collocation.stages import StageRows, stage_sparsity
from .._nlp.sparsity import Sparsity
from .._collocation import methods as collocation
from .biped import PoweredBiped

COSTS = ("torque-squared", "positive-work")
NORMALISATIONS = ("none", "distance", "transport")


class Layout(eqx.Module):
    """Where the variables sit in the flat vector ``z``: ``G`` points of ``s = 2j`` states and ``k`` controls,
    then ``T`` if it is free."""

    points: int = eqx.field(static=True)
    states: int = eqx.field(static=True)
    controls: int = eqx.field(static=True)
    free_time: bool = eqx.field(static=True)

    @property
    def size(self) -> int:
        return self.points * (self.states + self.controls) + int(self.free_time)

    def unpack(self, z, T_fixed):
        G, s, k = self.points, self.states, self.controls
        x = z[: G * s].reshape(G, s)
        u = z[G * s: G * (s + k)].reshape(G, k)
        T = z[-1] if self.free_time else T_fixed
        return x, u, T

    def pack(self, x, u, T=None):
        parts = [x.reshape(-1), u.reshape(-1)]
        if self.free_time:
            parts.append(jnp.reshape(T, (1,)))
        return jnp.concatenate(parts)


class GaitProblem(eqx.Module):
    """The numbers of one optimal-gait problem (its leaves are what gradients reach) and its structure (static).
    Built by :func:`~difimpact.optimal_gait`; see there for the meaning of each field."""

    biped: PoweredBiped
    step_length: Scalar | None
    step_time: Scalar | None
    speed: Scalar | None
    angle_bounds: tuple[Float[Array, " j"], Float[Array, " j"]]
    rate_bounds: tuple[Float[Array, " j"], Float[Array, " j"]]
    torque_bounds: tuple[Float[Array, " k"], Float[Array, " k"]]
    time_bounds: tuple[Scalar, Scalar]
    limits: tuple[Float[Array, " l"], Float[Array, " l"]]
    rate_limits: tuple[Float[Array, " r"], Float[Array, " r"]]
    friction: Scalar | None
    clearance: Scalar | None
    smoothing: Scalar
    limit_pairs: tuple[tuple[str, str | None], ...] = eqx.field(static=True)
    rate_pairs: tuple[tuple[str, str | None], ...] = eqx.field(static=True)
    method: str = eqx.field(static=True)
    segments: int = eqx.field(static=True)
    cost: str = eqx.field(static=True)
    normalise: str = eqx.field(static=True)
    foot_velocity: str = eqx.field(static=True)
    lift_off: str = eqx.field(static=True)

    @property
    def layout(self) -> Layout:
        j, k = self.biped.joints, self.biped.controls
        return Layout(collocation.points(self.method, self.segments), 2 * j, k, self.step_time is None)

    def unpack(self, z):
        return self.layout.unpack(z, self.step_time)

    def _field(self, x, u):
        """``ẋ`` and the ground force at every point."""
        j = self.biped.joints
        acc, force = jax.vmap(self.biped.dynamics)(x[:, :j], x[:, j:], u)
        return jnp.concatenate([x[:, j:], acc], axis=1), force

    def limit_rows(self, pairs):
        """Rows ``r`` with the limited angle ``θ_a − θ_b = r·θ`` (+ constant offsets; ``b = None``: ``θ_a``)."""
        tree = self.biped.model.tree()
        rows = tree._angle_rows()[:, 2:]
        names = tree.body_names
        row = lambda a, b: rows[names.index(a)] - (0.0 if b is None else rows[names.index(b)])  # noqa: E731
        return jnp.asarray([row(a, b) for a, b in pairs]).reshape(len(pairs), self.biped.joints)

    def objective(self, z):
        x, u, T = self.unpack(z)
        w = jnp.asarray(collocation.weights(self.method, self.segments), z.dtype)
        if self.cost == "torque-squared":
            running = jnp.sum(u**2, axis=1)
        else:
            power = u * jax.vmap(self.biped.joint_rates)(x[:, self.biped.joints:])
            running = jnp.sum(0.5 * (power + jnp.sqrt(power**2 + self.smoothing**2)), axis=1)
        J = T * (w @ running)
        if self.normalise == "none":
            return J
        distance = (self.step_length if self.step_length is not None else
                    self.biped.swing_foot_position(x[-1, : self.biped.joints])[0])
        if self.normalise == "distance":
            return J / distance
        weight = jnp.sum(self.biped.model.tree().mass) * self.biped.model.tree().g
        return J / (weight * distance)

    def impact(self, z):
        x, _, _ = self.unpack(z)
        j = self.biped.joints
        return self.biped.heel_strike(x[-1, :j], x[-1, j:])

    def constraints(self, z):
        """``(c, d)``: :meth:`equality` and :meth:`inequality` from one evaluation of the dynamics at every point
        and of the heel strike (what the solver differentiates)."""
        x, u, T = self.unpack(z)
        f, force = self._field(x, u)
        rates_plus, sol = self.impact(z)
        return self._equality(x, T, f, rates_plus), self._inequality(x, force, sol)

    def equality(self, z):
        """The collocation defects, the step's periodicity through the heel strike and relabelling, the swing
        foot on the ground at the step's end (at the step length, or the speed's)."""
        return self.constraints(z)[0]

    def _equality(self, x, T, f, rates_plus):
        j = self.biped.joints
        parts = [collocation.defects(self.method, x, f, T).reshape(-1)]
        parts += [x[0, :j] - self.biped.relabel(x[-1, :j]), x[0, j:] - rates_plus]
        foot = self.biped.swing_foot_position(x[-1, :j])
        parts.append(foot[1:])
        if self.step_length is not None:
            parts.append(jnp.reshape(foot[0] - self.step_length, (1,)))
        if self.speed is not None:
            parts.append(jnp.reshape(foot[0] - self.speed * T, (1,)))
        return jnp.concatenate(parts)

    def inequality(self, z):
        """The inequalities ``d(z)`` with their bounds (:meth:`inequality_bounds`), or ``None``."""
        return self.constraints(z)[1]

    def _inequality(self, x, force, sol):
        j = self.biped.joints
        parts = []
        if self.limit_pairs:
            parts.append((x[:, :j] @ self.limit_rows(self.limit_pairs).T).reshape(-1))
        if self.rate_pairs:
            parts.append((x[:, j:] @ self.limit_rows(self.rate_pairs).T).reshape(-1))
        if self.friction is not None:
            parts += [force[:, 1], self.friction * force[:, 1] - force[:, 0], self.friction * force[:, 1] + force[:, 0]]
        if self.clearance is not None:
            parts.append(jax.vmap(self.biped.swing_foot_position)(x[1:-1, :j])[:, 1])
        if self.foot_velocity != "none":
            v1 = self.biped.swing_foot_velocity(x[-1, :j], x[-1, j:])[1]
            if self.foot_velocity == "both":
                v0 = self.biped.swing_foot_velocity(x[0, :j], x[0, j:])[1]
                parts.append(jnp.stack([v0, -v1]))
            else:
                parts.append(jnp.reshape(-v1, (1,)))
        if self.lift_off == "impose":
            parts.append(jnp.reshape(self.biped.lift_off_speed(sol), (1,)))
        return jnp.concatenate(parts) if parts else None

    def inequality_bounds(self, dtype):
        G = self.layout.points
        lo, hi = [], []
        if self.limit_pairs:
            lo.append(jnp.tile(self.limits[0], G)), hi.append(jnp.tile(self.limits[1], G))
        if self.rate_pairs:
            lo.append(jnp.tile(self.rate_limits[0], G)), hi.append(jnp.tile(self.rate_limits[1], G))
        if self.friction is not None:
            lo.append(jnp.zeros(3 * G, dtype)), hi.append(jnp.full(3 * G, jnp.inf, dtype))
        if self.clearance is not None:
            lo.append(jnp.full(G - 2, self.clearance, dtype)), hi.append(jnp.full(G - 2, jnp.inf, dtype))
        if self.foot_velocity != "none":
            k = 2 if self.foot_velocity == "both" else 1
            lo.append(jnp.zeros(k, dtype)), hi.append(jnp.full(k, jnp.inf, dtype))
        if self.lift_off == "impose":
            lo.append(jnp.zeros(1, dtype)), hi.append(jnp.full(1, jnp.inf, dtype))
        if not lo:
            return None, None
        return jnp.concatenate(lo).astype(dtype), jnp.concatenate(hi).astype(dtype)

    def variable_bounds(self, dtype):
        G, lay = self.layout.points, self.layout
        state_lo = jnp.concatenate([self.angle_bounds[0], self.rate_bounds[0]])
        state_hi = jnp.concatenate([self.angle_bounds[1], self.rate_bounds[1]])
        lo = [jnp.tile(state_lo, G), jnp.tile(self.torque_bounds[0], G)]
        hi = [jnp.tile(state_hi, G), jnp.tile(self.torque_bounds[1], G)]
        if lay.free_time:
            lo.append(jnp.reshape(self.time_bounds[0], (1,))), hi.append(jnp.reshape(self.time_bounds[1], (1,)))
        return jnp.concatenate(lo).astype(dtype), jnp.concatenate(hi).astype(dtype)


def _columns(lay: Layout):
    """Column indices of each point's states and controls (``(G, s + k)``) and of ``T`` (or ``None``)."""
    G, s, k = lay.points, lay.states, lay.controls
    states = np.arange(G * s).reshape(G, s)
    controls = G * s + np.arange(G * k).reshape(G, k)
    return np.concatenate([states, controls], axis=1), (lay.size - 1 if lay.free_time else None)


def sparsity(problem: GaitProblem) -> Sparsity:
    """The derivatives' sparsity of :class:`GaitProblem` (rows in the order of its `equality` and `inequality`):
    a point's variables meet the defects of its segments, its own path constraints and, for the first and last
    point, the boundary rows; the Hessian is block diagonal per point but for ``T`` and, with a normalised cost
    and a free step length, the last point's angles. From the layout (:mod:`difimpact._collocation.stages`),
    ``O(nnz)``."""
    lay, j = problem.layout, problem.biped.joints
    cols, T = _columns(lay)
    G = lay.points
    rows = StageRows(cols, lay.size)
    t = () if T is None else (T,)
    hs = problem.method == "hermite-simpson"
    segments = [(2 * i, 2 * i + 1, 2 * i + 2) if hs else (i, i + 1) for i in range(problem.segments)]
    for _ in range(2 if hs else 1):
        for seg in segments:
            rows.add(seg, t, lay.states)
    periodicity = len(rows) + np.arange(2 * j)  # the ring's border (:mod:`difimpact._nlp.bordered`)
    rows.add((0, G - 1), count=2 * j)
    rows.add((G - 1,))
    if problem.step_length is not None:
        rows.add((G - 1,))
    if problem.speed is not None:
        rows.add((G - 1,), t)
    for count in (len(problem.limit_pairs), len(problem.rate_pairs)):
        for p in range(G):
            rows.add((p,), count=count)
    if problem.friction is not None:
        for _ in range(3):
            for p in range(G):
                rows.add((p,))
    if problem.clearance is not None:
        for p in range(1, G - 1):
            rows.add((p,))
    if problem.foot_velocity == "both":
        rows.add((0,))
    if problem.foot_velocity != "none":
        rows.add((G - 1,))
    if problem.lift_off == "impose":
        rows.add((G - 1,))
    dense = list(t)
    if problem.normalise != "none" and problem.step_length is None:
        dense += list(cols[G - 1, :j])
    # points three apart share no row (a segment's rows meet three consecutive points of the Hermite–Simpson
    # mesh, two of the trapezoidal one)
    return stage_sparsity(rows, groups=3, globals_=t, dense=dense, border_equalities=periodicity)
