"""The worked optimisation problem of Font-Llagunes et al. 2010: the compass walker's foot radius and step that
lose the least energy per distance (:func:`compass_foot_radius`)."""

import math

import jax.numpy as jnp
from jax.tree_util import Partial

from difimpact import CompassGait, Problem, energy_loss
from difimpact._validation import positive


def _bounds(*pairs):
    return jnp.array([p[0] for p in pairs], float), jnp.array([p[1] for p in pairs], float)


def compass_foot_radius(foot_length: float = 0.25, progression: float = 0.5) -> Problem:
    r"""Compass walker (Font-Llagunes et al. 2010): foot radius ``R`` and half inter-leg angle ``q3`` minimising the
    energy lost per distance, ``(T⁻ − T⁺) / D`` [J/m] (Font & Kövecses 2008's ξ_L, eq. 23, with the distance actually
    travelled).

    **Why constraints.** Unconstrained the problem has no interior optimum: the loss vanishes as ``R → l``
    (Font-Llagunes et al. 2010, §4: no impact at all) and, per distance, as ``q3 → 0`` (short steps, Font & Kövecses
    2008 conclusion (ii)). Two physical limits make it meaningful:

    - the foot arc must carry the rolling contact, which moves by ``2 q3`` on the arc during a step:
      arc length ``2 R q3 ≤`` `foot_length` [m];
    - each step must travel at least `progression` [m]. Per step the stance arc rolls ``2 R q3`` and the
      contact points are ``L = 2 (l − R) sin q3`` apart at heel strike, so ``D = L + 2 R q3`` (``L`` alone
      — :meth:`CompassGait.step_length` — vanishes at ``R = l``, where the walker is a rolling wheel).

    Both are active at the optimum: the best foot is the largest the foot length allows and the best step
    the shortest the task allows. Pre-impact state: Font-Llagunes et al. 2010, ``q̇3 = 1 rad/s`` (:meth:`CompassGait.
    pre_impact_state`); the swing foot sticks, the stance foot is released. ``x = [R, q3]`` within
    ``[0.05, 0.95] m × [2°, 30°]`` (Font-Llagunes et al. 2010's ranges, less ``R = l``, where the swing foot does not
    collide).
    """
    foot_length, progression = positive("foot_length", foot_length), positive("progression", progression)
    lower, upper = _bounds((0.05, 0.95), (math.radians(2.0), math.radians(30.0)))
    return Problem(Partial(_compass_objective), Partial(_compass_constraints, jnp.asarray(foot_length, float),
                                                        jnp.asarray(progression, float)), lower, upper, ("R", "q3"))


def _compass_parts(x):
    R, q3 = x[0], x[1]
    model = CompassGait(R=R)
    q, qdot = model.pre_impact_state(q3)
    distance = model.step_length(q) + 2 * R * q3
    return energy_loss(model, q, qdot, stick=("swing_foot",)), distance, R, q3


def _compass_objective(x):
    loss, distance, *_ = _compass_parts(x)
    return loss / distance


def _compass_constraints(foot_length, progression, x):
    _, distance, R, q3 = _compass_parts(x)
    return jnp.stack([2 * R * q3 / foot_length - 1.0, 1.0 - distance / progression])
