"""The heel strike: the stage of a stride that ends single support, in zero time.

A walker describes its bodies and its single support; the impact at heel strike is an impact law of the gait,
chosen by the walker's type (:func:`heel_strike_law`): the impulsive impact of :func:`~difimpact.impact` for
every walker (:class:`ImpulsiveHeelStrike`), and for :class:`~difimpact.SimplestWalker`, whose legs are massless,
its closed-form limit (:class:`MasslessLegsHeelStrike`).
"""

import abc
import functools

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import Array, Bool, Config, Float, Scalar, Velocity
from .._impact.constrained import ImpactResults
from .._impact.ground import impact
from .._models.simplest_walker import SimplestWalker
from .._models.walker import AbstractWalker


class HeelStrike(eqx.Module):
    """What a step needs from the heel-strike impact: the post-impact joint rates `theta_dot` (legs not yet
    swapped), the kinetic energy lost `energy_loss`, whether the trailing foot `lifted_off` and its normal
    velocity `trailing_velocity`, and the impact's `result` (:class:`~difimpact.ImpactResults`)."""

    theta_dot: Float[Array, " j"]
    energy_loss: Scalar
    lifted_off: Bool[Array, ""]
    trailing_velocity: Scalar
    result: ImpactResults


class AbstractHeelStrike(eqx.Module):
    """An impact law at heel strike: the state ``(q, q̇⁻)`` of a walker whose swing foot has just touched the
    ground, before the legs are relabelled, to a :class:`HeelStrike`."""

    @abc.abstractmethod
    def __call__(self, walker: AbstractWalker, q: Config, qdot: Velocity) -> HeelStrike:
        """The heel strike of `walker` in the pre-impact state ``(q, q̇⁻)``."""


class ImpulsiveHeelStrike(AbstractHeelStrike):
    """The impulsive impact of :func:`~difimpact.impact`: ``swing_foot`` collides and sticks, ``stance_foot`` is
    unilateral (it lifts off or stays; Font & Kövecses 2008, eq. 4)."""

    def __call__(self, walker: AbstractWalker, q: Config, qdot: Velocity) -> HeelStrike:
        sol = impact(walker, q, qdot, stick=("swing_foot",), unilateral=("stance_foot",), throw=False)
        return HeelStrike(sol.qdot_plus[2:], sol.loss, sol.lifted_off[0], sol.unilateral_velocity[0], sol.result)


class MasslessLegsHeelStrike(AbstractHeelStrike):
    r"""The heel strike of :class:`~difimpact.SimplestWalker`, the limit of massless legs (Garcia et al. 1998,
    eq. 4). At ``q_4 = 2 q_3 = 2a`` the hip's angular momentum about the striking foot is conserved and the new
    swing foot keeps zero velocity across its leg:

    $$
    \dot q_3^+ = \dot q_3^- \cos 2a, \qquad \dot q_4^+ = \dot q_3^+ (1 - \cos 2a)
    $$

    in the swapped labels; the hip loses ``½ M l² (q̇3⁻)² sin² 2a``. The old stance foot's normal velocity after
    the impact, ``2 l q̇3⁺ sin a cos² a``, says whether it lifts off."""

    def __call__(self, walker: SimplestWalker, q: Config, qdot: Velocity) -> HeelStrike:
        a, u3 = q[2], qdot[2]
        c = jnp.cos(2 * a)
        u3_plus = u3 * c
        trailing = 2 * walker.l * u3_plus * jnp.sin(a) * jnp.cos(a) ** 2
        loss = 0.5 * walker.M * walker.l**2 * u3**2 * (1 - c**2)
        u4_plus = u3_plus * (1 - c)
        # back to the pre-swap labels (the swap is an involution): the stride map swaps them again
        return HeelStrike(jnp.stack([u3_plus - u4_plus, -u4_plus]), loss, trailing > 0, trailing,
                          ImpactResults.successful)


@functools.singledispatch
def heel_strike_law(walker: AbstractWalker) -> AbstractHeelStrike:
    """The impact law of `walker`'s heel strike, by the walker's type: :class:`ImpulsiveHeelStrike` for every
    walker, :class:`MasslessLegsHeelStrike` for :class:`~difimpact.SimplestWalker`.

    A walker type of your own with another law registers it:
    ``heel_strike_law.register(MyWalker, lambda walker: MyLaw())``, ``MyLaw`` an :class:`AbstractHeelStrike`.
    """
    if not isinstance(walker, AbstractWalker):
        raise TypeError(f"`walker` must be an AbstractWalker, got {type(walker).__name__}.")
    return ImpulsiveHeelStrike()


heel_strike_law.register(SimplestWalker, lambda walker: MasslessLegsHeelStrike())


def heel_strike(walker: AbstractWalker, q: Config, qdot: Velocity) -> HeelStrike:
    """The heel strike of `walker` in the pre-impact state ``(q, q̇⁻)`` (legs not yet relabelled), by its impact
    law :func:`heel_strike_law`: the stage of :func:`~difimpact.stride` between single support and the swap."""
    return heel_strike_law(walker)(walker, q, qdot)

