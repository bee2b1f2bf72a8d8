"""Abstract contact laws: the normal force from indentation, the tangential force from slip."""

import abc
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

    A law says how the compliant solver treats it by its type: an :class:`AbstractSmoothFrictionLaw` is a
    smooth function of the state, an :class:`AbstractStickSlipLaw` has a sliding and a stick regime that the
    solver tracks as phases.
    """

    mu: eqx.AbstractVar[Scalar]

    @abc.abstractmethod
    def force(self, normal_force: Scalar, slip_velocity: Scalar, displacement: Scalar,
              delta: Scalar) -> Scalar:
        """Tangential force ``F_t`` (along +x) given ``F_n``, ``v_t``, ``z`` and the indentation ``δ``."""

    def displacement_rate(self, normal_force: Scalar, slip_velocity: Scalar, displacement: Scalar,
                          delta: Scalar) -> Scalar:
        """``ż`` of the tangential displacement ``z``; zero for laws without one."""
        return jnp.zeros_like(slip_velocity)


class AbstractSmoothFrictionLaw(AbstractFrictionLaw):
    """A friction law that is a smooth function ``F_t(F_n, v_t, z, δ)`` of the state, with no regimes:
    :meth:`force` applies at every instant (e.g. :class:`RegularisedCoulomb`). The compliant solver defaults
    to an implicit solver for these laws, whose ``∂F_t/∂v_t`` is usually large."""


class AbstractStickSlipLaw(AbstractFrictionLaw):
    """A friction law with two regimes that the compliant solver tracks as phases with switching events:
    sliding, ``F_t = −μ σ F_n`` (Font-Llagunes et al. 2012, eq. 38; :meth:`sliding_force`), and stick, entered when the
    slip velocity ``σ v_t`` reaches zero and left when ``|F_t|`` reaches ``μ F_n``. How it sticks is said by the
    subclass: :class:`AbstractExactStickLaw` or :class:`AbstractElasticStickLaw`."""

    def sliding_force(self, normal_force: Scalar, sigma: Scalar) -> Scalar:
        """``F_t = −μ σ F_n`` with ``σ = ±1`` the sliding direction (Font-Llagunes et al. 2012, eq. 38)."""
        return -self.mu * sigma * normal_force


class AbstractExactStickLaw(AbstractStickSlipLaw):
    """A stick–slip law whose stick is rigid: the contact point is held still by a Lagrange multiplier
    ``λ``, valid while ``|λ| ≤ μ F_n`` (Font-Llagunes et al. 2012, §4.2; :class:`Coulomb`). A contact at tangential rest
    sticks when its multiplier is inside the friction cone, else it slides the way ``λ`` pushes."""


class AbstractElasticStickLaw(AbstractStickSlipLaw):
    """A stick–slip law whose stick is elastic: :meth:`force` of a tangential displacement ``z`` integrated
    with ``ż =`` :meth:`displacement_rate` (``ż = 0`` while sliding); no constraint row
    (:class:`TangentialSpring`). The contact enters stick at onset with ``z = 0`` and always enters it when
    sliding stops, with the ``z`` of :meth:`stick_displacement` (``F_t`` continuous)."""

    @abc.abstractmethod
    def stick_displacement(self, friction_force: Scalar, delta: Scalar) -> Scalar:
        """``z`` at which :meth:`force` equals ``friction_force`` at indentation ``δ``."""
