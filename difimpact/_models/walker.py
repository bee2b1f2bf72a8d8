"""The abstract walker: a planar model with single support on one foot and heel strike of the other."""

import abc

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Config, Float, Scalar, Velocity
from .._linalg import full_precision, solve_spd
from .base import AbstractSteppingModel, feet_apart


class AbstractWalker(AbstractSteppingModel):
    """Base class of the models that walk down a slope (passive dynamic walking).

    Coordinates ``q = [q1, q2, θ...]``: ``(q1, q2)`` the centre of the stance foot's arc (radius
    :attr:`foot_radius`, zero for a point foot) and the joint angles ``θ``, ``θ[0]`` the absolute angle of the
    stance leg. In single support the stance foot rolls without slipping on the ground ``y = 0`` of the model
    frame, so ``q = [R θ0, R, θ]`` (:meth:`stance_configuration`, up to a constant shift along the ground that
    the dynamics do not see). A step ends when the point ``swing_foot`` strikes the ground ahead
    (:meth:`strike_gap` reaches zero); the legs are then relabelled (:meth:`swap`). The Poincaré section is the
    state just after heel strike, in the coordinates ``x`` of :meth:`to_section`. A walker describes its bodies
    and its single support (:meth:`stance_accelerations`); what happens at heel strike is the impact law of the
    gait, :func:`~difimpact.heel_strike_law`.

    Subclasses hold the ground slope `slope` ``γ`` (radians, down toward ``+x``), which tilts gravity in the
    model frame (:class:`~difimpact.PlanarTree`), and the leg length `l` (with ``g``, the time scale ``√(l/g)``).
    """

    slope: eqx.AbstractVar[Scalar]
    l: eqx.AbstractVar[Scalar]
    section_names: eqx.AbstractClassVar[tuple[str, ...]]

    @property
    @abc.abstractmethod
    def foot_radius(self) -> Scalar:
        """Radius ``R`` of the rolling stance foot (0: point foot)."""

    @abc.abstractmethod
    def from_section(self, x: Float[Array, " k"]) -> tuple[Float[Array, " j"], Float[Array, " j"]]:
        """Joint angles and rates ``(θ, θ̇)`` of the section point ``x`` (just after heel strike)."""

    @abc.abstractmethod
    def to_section(self, theta: Float[Array, " j"], theta_dot: Float[Array, " j"]) -> Float[Array, " k"]:
        """Section coordinates ``x`` of a post-impact state ``(θ, θ̇)``."""

    @abc.abstractmethod
    def strike_gap(self, theta: Float[Array, " j"]) -> Scalar:
        """A function of ``θ`` whose zero is the heel strike: it is positive before it, and a step that starts
        with it at zero (or below) ends at its first zero after it has become positive."""

    @abc.abstractmethod
    def swap(self, theta: Float[Array, " j"]) -> Float[Array, " j"]:
        """Joint angles after the legs are relabelled at heel strike (affine in ``θ``)."""

    @abc.abstractmethod
    def strike_posture(self) -> tuple[Config, Velocity]:
        """A valid heel-strike state ``(q, q̇⁻)``, evaluated in place of a failed step (a batch goes on)."""

    @abc.abstractmethod
    def stance_accelerations(self, theta: Float[Array, " j"], theta_dot: Float[Array, " j"]) -> Float[Array, " j"]:
        """Single-support joint accelerations ``θ̈`` with the stance foot rolling (for any walker,
        :func:`rolling_stance_accelerations` of its tree; a closed form where one is known)."""

    def step_length(self, q: Config) -> Scalar:
        """Distance between the two contact points along the ground."""
        return feet_apart(self, q)

    @property
    def section_size(self) -> int:
        return len(self.section_names)

    @property
    def total_mass(self) -> Scalar:
        return jnp.sum(self.tree().mass)

    @property
    def time_scale(self) -> Scalar:
        """``√(l/g)``."""
        return jnp.sqrt(self.l / self.tree().g)

    def stance_configuration(self, theta: Float[Array, " j"]) -> Config:
        """``q = [R θ0, R, θ]``: the stance foot rolling without slipping."""
        R = self.foot_radius
        return jnp.concatenate([jnp.stack([R * theta[0], R + jnp.zeros_like(theta[0])]), theta])


@full_precision
def rolling_stance_accelerations(walker: AbstractWalker, theta: Float[Array, " j"],
                                 theta_dot: Float[Array, " j"]) -> Float[Array, " j"]:
    r"""Single-support joint accelerations of `walker`'s tree with the stance foot rolling: with
    ``q = φ(θ)`` (:meth:`AbstractWalker.stance_configuration`), ``B = ∂φ/∂θ`` (constant),

    $$
    B^T M(q) B\,\ddot\theta = -B^T c(q, B\dot\theta),
    $$

    solved by the unrolled ``LDLᵀ`` of :func:`difimpact._linalg.solve_spd` (no LAPACK under ``vmap``).
    """
    q, qdot = jax.jvp(walker.stance_configuration, (theta,), (theta_dot,))
    B = jax.jacfwd(walker.stance_configuration)(theta)
    M, c = walker.tree().mass_and_bias(q, qdot)
    return solve_spd(B.T @ M @ B, -(B.T @ c), "reduced stance mass matrix")
