"""The powered walkers of the papers: Kelly's five-link biped and Font & Kövecses 2008's biped with a torso, and Kelly's
optimal-gait problem."""

import math

import jax.numpy as jnp

from .._models.biped_with_torso import BipedWithTorso
from .._models.five_link_biped import FiveLinkBiped
from .._nlp import NLPOptions
from .._validation import instance
from .biped import PoweredBiped
from .optimal import optimal_gait, OptimalGait

# Kelly's post-impact guess q0 = (−0.3, 0.7, 0, −0.5, −0.6) (OptimTraj MAIN.m) in FiveLinkBiped's joint
# coordinates (a, b, c, d, e) = (−q1, q2 − q1, q2 − q3, q4 − q3, q4 − q5).
KELLY_GUESS = (0.3, 1.0, 0.7, -0.5, 0.1)


def five_link_walker(model: FiveLinkBiped | None = None) -> PoweredBiped:
    """:class:`~difimpact.FiveLinkBiped` (Kelly's parameters by default) walking on its point feet, torques at the
    knees and hips (Kelly's ``u_2..u_5``; the stance ankle is unactuated)."""
    model = FiveLinkBiped() if model is None else model
    instance("model", model, FiveLinkBiped)
    return PoweredBiped(model, "stance_foot", "swing_foot", model.actuators, model.mirror)


def biped_torso_walker(model: BipedWithTorso | None = None) -> PoweredBiped:
    """Font & Kövecses 2008's :class:`~difimpact.BipedWithTorso` walking on its point feet, the right leg in stance,
    powered by two hip torques: torso against the stance leg, swing leg against the torso."""
    model = BipedWithTorso() if model is None else model
    instance("model", model, BipedWithTorso)
    return PoweredBiped(model, "P_R", "P_L", (("torso", "right_leg"), ("left_leg", "torso")),
                        (("right_leg", "left_leg"), ("torso", "torso")))


def kelly_gait(model: FiveLinkBiped | None = None, *, step_length=0.5, step_time=0.7,
               method: str = "hermite-simpson", segments: int = 6, guess=KELLY_GUESS,
               options: NLPOptions = NLPOptions(), throw: bool = True) -> OptimalGait:
    r"""Kelly's five-link biped problem (Kelly 2017, §7; OptimTraj ``demo/fiveLinkBiped/MAIN.m``): one step of
    0.5 m in 0.7 s minimising ``∫ Σ u² dt``, torques ``|u| ≤ 100`` N m at the knees and hips (the ankle's is
    zero), absolute link angles within ``±π/2`` and rates within ``±10`` rad/s, knees that do not hyperextend,
    the swing foot rising at the start and descending at the end, on his mesh (Hermite–Simpson, 6 segments) by
    default, from his guess (`guess`: joint angles after heel strike, or an :class:`OptimalGait` to start from).
    Kelly reports ``J = 469.5507`` there (fmincon, ``TolFun`` 1e-3).

    **Example:**

    ```python
    import difimpact as di

    gait = di.kelly_gait()                 # Kelly 2017, §7: 0.5 m in 0.7 s, ∫Σu² dt, his mesh and bounds
    print(gait.cost, gait.step_time)       # 469.547… 0.7: Kelly's published 469.5507 (fmincon, TolFun 1e-3)
    ```
    """
    walker = five_link_walker(model)
    bodies = ("stance_tibia", "stance_femur", "torso", "swing_femur", "swing_tibia")
    angles = tuple((b, None, -math.pi / 2, math.pi / 2) for b in bodies)
    rates = tuple((b, None, -10.0, 10.0) for b in bodies)
    knees = (("stance_femur", "stance_tibia", -jnp.inf, 0.0), ("swing_tibia", "swing_femur", 0.0, jnp.inf))
    guess = guess if isinstance(guess, OptimalGait) else jnp.asarray(guess, float)
    return optimal_gait(walker, guess, step_length=step_length, step_time=step_time,
                        method=method, segments=segments, torque_bounds=(-100.0, 100.0),
                        joint_limits=knees + angles, rate_limits=rates, foot_velocity=True, options=options,
                        throw=throw)
