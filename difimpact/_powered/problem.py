r"""The numbers and the structure of one optimal-gait problem, as :func:`~difimpact.optimal_gait` checked them.

The step is transcribed as a phase in single support of the multi-phase layer
(:func:`~difimpact._collocation.stance.from_gait_problem`): joint states and torques at the collocation points, the
periodicity through the heel strike and the legs' relabelling, costs (Kelly 2017, eq. 7.1; Srinivasan & Ruina,
*Computer optimization of a minimal biped model discovers walking and running*, Nature 439, 2006)

$$J_{u^2} = \int_0^T \sum_j u_j^2\,dt,\qquad J_{W^+} = \int_0^T \sum_j \max(0, u_j ω_j)\,dt,$$

divided by the step length (cost per distance) or by ``m g L`` (cost of transport) on request.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Float, Scalar
from .biped import PoweredBiped

COSTS = ("torque-squared", "positive-work")
NORMALISATIONS = ("none", "distance", "transport")


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
    constraints: tuple
    limit_pairs: tuple[tuple[str, str | None], ...] = eqx.field(static=True)
    rate_pairs: tuple[tuple[str, str | None], ...] = eqx.field(static=True)
    method: str = eqx.field(static=True)
    segments: int = eqx.field(static=True)
    cost: str = eqx.field(static=True)
    normalise: str = eqx.field(static=True)
    foot_velocity: str = eqx.field(static=True)
    lift_off: str = eqx.field(static=True)

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
