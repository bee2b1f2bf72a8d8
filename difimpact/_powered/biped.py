r"""A model that walks on point feet with joint torques: single support, heel strike and the legs' relabelling.

In single support the stance foot is the model's base ``(q_1, q_2)``, pinned at the origin, so the state is the
joint coordinates ``θ = q_{3:}`` and their rates; with joint torques ``u`` the equations of motion are the rows of
$M \ddot{q} + c = B u + J_s^T F$ below the base's,

$$M_{θθ}(θ)\,\ddot θ = B_θ u - c_θ(θ, \dot θ),\qquad F = M_{bθ}\,\ddot θ + c_b,$$

the second giving the ground's force ``F = (F_t, F_n)`` on the stance foot. An actuator between bodies ``a`` and
``b`` applies ``u`` to ``a`` and ``−u`` to ``b`` (positive clockwise, the package's angle direction), so its column
of ``B`` is $(\partial \theta_a/\partial q - \partial \theta_b/\partial q)^T$: joint torques for any tree, whatever its
coordinates.

Heel strike is the impulsive impact of :func:`~difimpact.constrained_impact` with the swing foot sticking and the
trailing foot free, $M (\dot{q}^+ - \dot{q}^-) = A^T \lambda$, $A \dot{q}^+ = 0$ with ``A`` the swing foot's Jacobian
(Font & Kövecses 2008, eq. 3; Westervelt et al., *Feedback Control of Dynamic Bipedal Robot Locomotion*, 2007, §3.4.2);
the trailing foot's post-impact normal velocity $v_{Sn}^+$ must be positive for it to lift off (Font & Kövecses 2008,
eq. 4). The legs are then relabelled: every body takes the angle of its mirror image, $\theta^+ = R \theta^-$,
$\dot \theta^+ = R \dot q^+_\theta$.
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float, Scalar
from .._impact.kkt import ImpactSolution, solve_kkt, solve_kkt_regular
from .._linalg import full_precision, solve_spd
from .._models.base import AbstractPlanarModel
from .._validation import instance


def _body(tree, name: str, what: str) -> int:
    if name not in tree.body_names:
        raise ValueError(f"`{what}`: unknown body {name!r}; this model has {list(tree.body_names)}.")
    return tree.body_names.index(name)


def _pairs(name: str, x) -> tuple[tuple[str, str], ...]:
    if isinstance(x, str) or not all(isinstance(p, (tuple, list)) and len(p) == 2 and
                                     all(isinstance(b, str) for b in p) for p in x):
        raise TypeError(f"`{name}` must be a sequence of (body, body) name pairs, got {x!r}.")
    return tuple((a, b) for a, b in x)


class PoweredBiped(eqx.Module):
    """A planar model walking on point feet, with joint torques in single support.

    **Arguments:**

    - `model`: any :class:`~difimpact.AbstractPlanarModel` whose base ``(q_1, q_2)`` is the stance foot.
    - `stance_foot`, `swing_foot`: the feet's point names.
    - `actuators`: ``(body_a, body_b)`` pairs: a torque on ``a`` against ``b``; the stance foot has none.
    - `mirror`: the bodies that exchange names at heel strike, ``(stance_body, swing_body)`` pairs (a body
      paired with itself keeps its angle, as a torso does); bodies without a coordinate are ignored.
    """

    model: AbstractPlanarModel
    stance_foot: str = eqx.field(static=True)
    swing_foot: str = eqx.field(static=True)
    actuators: tuple[tuple[str, str], ...] = eqx.field(static=True)
    mirror: tuple[tuple[str, str], ...] = eqx.field(static=True)

    def __init__(self, model, stance_foot: str, swing_foot: str, actuators, mirror):
        instance("model", model, AbstractPlanarModel)
        tree = model.tree()
        for what, p in (("stance_foot", stance_foot), ("swing_foot", swing_foot)):
            if p not in tree.point_names:
                raise ValueError(f"`{what}`: unknown point {p!r}; this model has {list(tree.point_names)}.")
        self.model, self.stance_foot, self.swing_foot = model, stance_foot, swing_foot
        self.actuators, self.mirror = _pairs("actuators", actuators), _pairs("mirror", mirror)
        if not self.actuators:
            raise ValueError("`actuators` must name at least one (body, body) pair.")
        for a, b in self.actuators + self.mirror:
            _body(tree, a, "actuators/mirror"), _body(tree, b, "actuators/mirror")
        self.relabelling()  # raises where the mirror does not determine the joint angles

    def __check_init__(self):
        if self.stance_foot == self.swing_foot:
            raise ValueError(f"`stance_foot` and `swing_foot` must be two points, got {self.stance_foot!r} for both.")

    @property
    def joints(self) -> int:
        """Number of joint coordinates ``θ`` (the model's coordinates less the base's two)."""
        return self.model.n - 2

    @property
    def controls(self) -> int:
        return len(self.actuators)

    def actuation(self) -> np.ndarray:
        """``B`` ``(n, k)``: column ``j`` is $(\\partial \\theta_a/\\partial q - \\partial \\theta_b/\\partial q)^T$ of
        actuator ``(a, b)``."""
        tree = self.model.tree()
        rows = tree._angle_rows()
        return np.stack([rows[_body(tree, a, "actuators")] - rows[_body(tree, b, "actuators")]
                         for a, b in self.actuators], axis=1)

    def relabelling(self) -> np.ndarray:
        """``R`` with $\\theta^+ = R \\theta^-$: the joint coordinates that give every body of `mirror` the angle of its
        mirror image (up to the bodies' constant offsets), least squares over the bodies, which must fix them."""
        tree = self.model.tree()
        rows = tree._angle_rows()[:, 2:]
        swap = {}
        for a, b in self.mirror:
            swap[_body(tree, a, "mirror")], swap[_body(tree, b, "mirror")] = _body(tree, b, "mirror"), _body(
                tree, a, "mirror")
        bodies = [i for i in sorted(swap) if np.any(rows[i])]
        A, target = rows[bodies], rows[[swap[i] for i in bodies]]
        if np.linalg.matrix_rank(A) < self.joints:
            raise ValueError(f"`mirror` {list(self.mirror)} does not determine the {self.joints} joint angles: "
                             "pair every body that has a joint coordinate.")
        R = np.linalg.lstsq(A, target, rcond=None)[0]
        if not np.allclose(A @ R, target, atol=1e-12):
            raise ValueError(f"`mirror` {list(self.mirror)} is not a relabelling of the joint coordinates.")
        return R

    def configuration(self, theta: Float[Array, " j"]) -> Float[Array, " n"]:
        return jnp.concatenate([jnp.zeros(2, theta.dtype), theta])

    @full_precision
    def dynamics(self, theta, theta_dot, u) -> tuple[Float[Array, " j"], Float[Array, " 2"]]:
        """``(θ̈, F)``: joint accelerations and the ground's force ``(F_t, F_n)`` on the stance foot."""
        q, qd = self.configuration(theta), self.configuration(theta_dot)
        M, c = self.model.tree().mass_and_bias(q, qd)
        tau = jnp.asarray(self.actuation(), theta.dtype) @ u
        acc = solve_spd(M[2:, 2:], tau[2:] - c[2:], "joint mass matrix")
        return acc, M[:2, 2:] @ acc + c[:2]

    def swing_foot_position(self, theta) -> Float[Array, " 2"]:
        return self.model.tree().point_position(self.configuration(theta), self.swing_foot)

    def swing_foot_velocity(self, theta, theta_dot) -> Float[Array, " 2"]:
        J = self.model.tree().point_jacobian(self.configuration(theta), self.swing_foot)
        return J @ self.configuration(theta_dot)

    def joint_rates(self, theta_dot) -> Float[Array, " k"]:
        """The actuators' joint rates $\\omega  = B^T \\dot{q}$ (their power is ``u ω``)."""
        return jnp.asarray(self.actuation()[2:].T, theta_dot.dtype) @ theta_dot

    @full_precision
    def heel_strike(self, theta, theta_dot, diagnose: bool = True) -> tuple[Float[Array, " j"], ImpactSolution]:
        """Post-impact joint rates, relabelled (the next step's ``θ̇``), and the impact's solution (energies,
        impulses; ``qdot_plus[1]`` the trailing foot's normal velocity $v_{Sn}^+$). Without `diagnose`, by the
        Schur complement alone (:func:`~difimpact._impact.kkt.solve_kkt_regular`: the swing foot's two rows have
        full rank whatever the posture), as a transcription differentiates it."""
        q, qd = self.configuration(theta), self.configuration(theta_dot)
        tree = self.model.tree()
        A = tree.point_jacobian(q, self.swing_foot)[::-1]
        M, b = tree.mass_matrix(q), jnp.zeros(2, q.dtype)
        sol = solve_kkt(M, A, qd, b, False) if diagnose else solve_kkt_regular(M, A, qd, b)
        return self.relabelled_rates(sol), sol

    def relabelled_rates(self, sol: ImpactSolution) -> Float[Array, " j"]:
        """The joint rates after the heel strike `sol`, relabelled: the next step's ``θ̇``."""
        return jnp.asarray(self.relabelling(), sol.qdot_plus.dtype) @ sol.qdot_plus[2:]

    def relabel(self, theta) -> Float[Array, " j"]:
        return jnp.asarray(self.relabelling(), theta.dtype) @ theta

    def lift_off_speed(self, sol: ImpactSolution) -> Scalar:
        """$v_{Sn}^+$: the trailing (old stance) foot's normal velocity just after heel strike."""
        return sol.qdot_plus[1]
