"""The worked optimisation problem of Font-Llagunes et al. 2012: the crutch walker's posture of least peak tip
force that keeps the tip from sliding (:func:`crutch_peak_force`)."""

import math

import diffrax
import jax.numpy as jnp

from difimpact import CrutchWalker, Problem, forward_mode_gradient, peak_contact_force, sliding_margin
from difimpact._validation import positive, tolerance

from .crutch_tip import tip_contact


def _bounds(*pairs):
    return jnp.array([p[0] for p in pairs], float), jnp.array([p[1] for p in pairs], float)


def crutch_peak_force(margin: float = 0.05, mu: float = 0.75, rtol: float = 1e-6) -> Problem:
    r"""Crutch walker (Font-Llagunes et al. 2012): posture ``x = [q3, q4]`` (leg angle, torso relative to the legs)
    minimising the peak crutch-tip force of the compliant contact phase (Font-Llagunes et al. 2012, §4–5: Hunt–Crossley
    + Hertz tip, exact Coulomb friction ``μ``), in kN, subject to ``μ ≥ μ_c + margin``
    (:func:`~difimpact.sliding_margin`; Font-Llagunes et al. 2012, eq. 8, from the impulsive map): a stick, once
    reached, is kept with ``margin`` to spare. That alone does not make the impact end stuck
    (:func:`~difimpact.sticking_margin`); here it does: the tip starts sliding backward and, over the whole feasible set
    (defaults), comes to rest and sticks (``slide-stick``), with ``μ − μ_stick ≥ margin − 0.022`` (``μ_stick − μ_c ≤
    0.022`` on a 61 × 61 grid).

    Pre-impact state of Font-Llagunes et al. 2012 (§5): ``q5 = 150°``, ``q6`` placing the tip on the ground ahead of the
    feet, ``q̇ = [0, 0, 1, 0, −0.2, 0]`` rad/s. Bounds: ``q3 ∈ [3°, 21°]`` (Font-Llagunes et al. 2012's range), ``q4 ∈
    [0°, 20°]``. The compliant solve uses a modest tolerance `rtol` (its peak is refined by
    :func:`~difimpact.peak_contact_force`); each objective gradient is one forward-mode solve with two
    tangents (the objective supports ``jax.grad`` and ``jax.vmap``, not ``jax.jacfwd``).

    The peak force falls as the legs and the torso lean forward, and so does the sliding margin: with the
    defaults the optimum is the vertex ``q4 = 20°`` (bound), ``μ − μ_c = margin`` (``q3 ≈ 7.71°``, 4.834 kN;
    ``μ − μ_stick = 0.028`` there).
    ``solve(start, learning_rate=0.01, steps=150, rounds=4, penalty=30.0)`` reaches it (multiplier ≈ 0.51);
    with the default ``penalty=100`` the multiplier collapses to 0 between rounds.
    """
    margin = positive("margin", margin, shape=())
    tolerance("rtol", rtol, below=1.0)  # kept a Python float: static in the compiled solve
    model = CrutchWalker()
    contact = tip_contact(mu=mu)

    def state(x):
        return model.pre_impact_state(x[0], -0.2, q4=x[1])

    def peak(x):
        return 1e-3 * peak_contact_force(model, *state(x), "Q", normal=contact.normal_law,
                                         friction=contact.friction_law, rtol=rtol, atol=1e-2 * rtol,
                                         max_steps=256, adjoint=diffrax.ForwardMode())

    def constraints(x):
        return (1.0 - sliding_margin(model, *state(x), "Q", friction=contact.friction_law) / margin)[None]

    lower, upper = _bounds((math.radians(3.0), math.radians(21.0)), (0.0, math.radians(20.0)))
    return Problem(forward_mode_gradient(peak), constraints, lower, upper, ("q3", "q4"))
