"""Abstract contact laws: the normal force from indentation, the tangential force from slip."""

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import Scalar

# Reference indentation used to scale event functions and forces to O(1) (1 mm).
DELTA_REF = 1e-3


def safe_power(x: Scalar, p: float) -> Scalar:
    """``max(x, 0) ** p`` with a finite derivative everywhere (double ``jnp.where``: the branch that is
    not taken never sees a non-positive base, so ``x ** (p - 1)`` is never evaluated at ``x <= 0``)."""
    inside = x > 0
    return jnp.where(inside, jnp.where(inside, x, 1.0) ** p, 0.0)


class AbstractNormalLaw(eqx.Module):
    """A compliant normal force ``F_n(δ, δ̇) ≥ 0`` at a point contact.

    ``δ`` is the indentation (positive inside the ground), ``δ̇`` its rate. The force is zero out of
    contact (``δ ≤ 0``) and never pulls: where damping would make it negative it is clipped to zero.
    """

    @abc.abstractmethod
    def unclipped(self, delta: Scalar, delta_dot: Scalar) -> Scalar:
        """The law's formula, possibly negative, zero for ``δ ≤ 0``; :meth:`force` clips it."""

    @abc.abstractmethod
    def margin(self, delta: Scalar, delta_dot: Scalar) -> Scalar:
        """A smooth O(1) function with the sign of the unclipped force while ``δ > 0``: the force
        returns to zero (separation) where it crosses zero (used as an event function)."""

    @abc.abstractmethod
    def reference_force(self) -> Scalar:
        """The static force at ``δ = 1 mm`` (scale of the stick/slip event functions)."""

    def force(self, delta: Scalar, delta_dot: Scalar) -> Scalar:
        """``F_n = max(f(δ, δ̇), 0)``, zero for ``δ ≤ 0``."""
        return jnp.maximum(self.unclipped(delta, delta_dot), 0.0)


class AbstractFrictionLaw(eqx.Module):
    """A tangential force law at a point contact with friction coefficient ``mu``.

    ``hybrid`` laws have two regimes that the compliant solver tracks as phases with switching events:
    sliding, ``F_t = −μ σ F_n`` (seed 000, eq. 38), and stick, entered when the slip velocity reaches zero
    and left when ``|F_t|`` reaches ``μ F_n``. In stick, ``exact_stick`` laws (:class:`Coulomb`) hold the
    contact point still with a multiplier; the others (:class:`TangentialSpring`) apply :meth:`force` of an
    elastic displacement ``z`` integrated with :meth:`displacement_rate` (``ż = 0`` while sliding). The
    other laws are smooth functions of the slip velocity ``v_t``, with no regimes.
    """

    mu: eqx.AbstractVar[Scalar]
    hybrid: ClassVar[bool] = False
    exact_stick: ClassVar[bool] = False

    @abc.abstractmethod
    def force(self, normal_force: Scalar, slip_velocity: Scalar, displacement: Scalar,
              delta: Scalar) -> Scalar:
        """Tangential force ``F_t`` (along +x) given ``F_n``, ``v_t``, ``z`` and the indentation ``δ``."""

    def displacement_rate(self, normal_force: Scalar, slip_velocity: Scalar, displacement: Scalar,
                          delta: Scalar) -> Scalar:
        """``ż`` of the tangential displacement; zero for laws without one."""
        return jnp.zeros_like(slip_velocity)

    def stick_displacement(self, friction_force: Scalar, delta: Scalar) -> Scalar:
        """``z`` at which :meth:`force` equals ``friction_force``: the state a hybrid law enters stick with,
        so that ``F_t`` is continuous; zero for laws without a displacement."""
        return jnp.zeros_like(friction_force)
