"""The worked optimisation problem of Font & Kövecses 2008: the torso angle and upper-body mass of the biped with
torso that lose the least energy at heel strike (:func:`biped_torso`)."""

import math

import jax.numpy as jnp
from jax.tree_util import Partial

from difimpact import BipedWithTorso, Problem, constrained_energy_index, post_impact_velocity
from difimpact._validation import positive

_BIPED_CONTACT = dict(stick=("P_L",), massless="keep")  # §4.2: swing foot sticks, stance foot released


def _bounds(*pairs):
    return jnp.array([p[0] for p in pairs], float), jnp.array([p[1] for p in pairs], float)


def biped_torso(lift_off: float = 0.05, q4: float = math.radians(30.0)) -> Problem:
    r"""Biped with torso (Font & Kövecses 2008, §4.2): torso angle ``q5`` and upper-body mass ratio ``μ_T = m_T/m_H``
    minimising ``ξ_I = T_c⁻ / T⁻`` subject to passive stance-foot lift-off ``v_Sn⁺ ≥`` `lift_off` [m/s]
    (Font & Kövecses 2008, eq. 4).

    As in Font & Kövecses 2008, §4.2: ``q4 = 30°``, ``m = 5 kg`` per leg, ``m_B = 30 kg`` (so ``m_H = 20/(1 + μ_T)``),
    and ``x = [q5, μ_T]`` within ``[0°, 30°] × [0, 2]`` (torso between aligned with the stance leg and aligned
    with the colliding leg). With a small margin the lift-off constraint is inactive and the optimum is the
    paper's conclusions: torso aligned with the stance leg (``q5 = 0``, conclusion (iii)) and the heaviest torso
    (``μ_T = 2``, §4.2). A larger margin (lift-off needs a light torso, Fig. 5) makes it active and trades
    torso mass for lift-off. The left foot sticks, the right foot is released (``massless="keep"``: ``μ_T = 0``
    is a massless torso).
    """
    lift_off, q4 = (jnp.asarray(positive(k, v, shape=()), float) for k, v in (("lift_off", lift_off), ("q4", q4)))
    lower, upper = _bounds((0.0, math.radians(30.0)), (0.0, 2.0))
    return Problem(Partial(_biped_objective, q4), Partial(_biped_constraints, q4, lift_off), lower, upper,
                   ("q5", "mu_T"))


def _biped_state(q4, x):
    q5, mu_T = x[0], x[1]
    m_H = 20.0 / (1.0 + mu_T)
    model = BipedWithTorso(m=5.0, m_H=m_H, m_T=mu_T * m_H)
    return (model, *model.pre_impact_state(q4, q5))


def _biped_objective(q4, x):
    return constrained_energy_index(*_biped_state(q4, x), **_BIPED_CONTACT)


def _biped_constraints(q4, lift_off, x):
    v_Sn = post_impact_velocity(*_biped_state(q4, x), "P_R", **_BIPED_CONTACT)[1]
    return (1.0 - v_Sn / lift_off)[None]
