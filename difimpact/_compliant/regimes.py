"""The friction regimes of the compliant contact phase: the regimes a phase starts in and how each event
switches them.

- Onset: the contact closes; an elastic-stick law enters stick with ``z = 0``, any other slides along
  ``v_t`` (at tangential rest: the way its stick multiplier pushes).
- Separation: the contact opens.
- Stick (``σ v_t`` reaches 0): an exact-stick contact sticks if its multiplier is inside the friction cone,
  otherwise its sliding reverses; an elastic-stick contact always sticks, with the displacement ``z`` whose
  force equals the sliding force (``F_t`` continuous; Font-Llagunes et al. 2010, after eq. 19).
- Slip (``|F_t|`` reaches ``μ F_n``): the contact slides against its stick force, ``σ = −sign F_t``.
"""

import jax.numpy as jnp

from .._contact import AbstractElasticStickLaw, AbstractExactStickLaw, Contact
from .._custom_types import Array, Float, Int
from .._models import AbstractPlanarModel
from .dynamics import (FreeMotion, friction_coefficients, free_motion, law_is, stick_multiplier,
                       tangential_forces)
from .events import ContactEvent
from .state import ContactModes, MM, z_slice

REST = 1e-12  # a contact point slower than this [m/s] is at tangential rest (rounding of a placed posture)
TOUCH = 1e-12  # residual [m] of placing a point on the ground


def initial_modes(contacts: tuple[Contact, ...], free: FreeMotion, y0) -> ContactModes:
    """The regimes at the start, from the :class:`~difimpact._compliant.dynamics.FreeMotion` ``free`` of the
    initial state ``y0``. The impacting (first) contact starts closed if it touches to within ``TOUCH``, the
    others only if indented beyond it (an unloaded stance foot at ``δ = ±10⁻¹⁶`` starts open and closes at its
    onset event). An elastic-stick contact starts in stick with ``z = 0``; an exact-stick one that starts loaded
    and at rest sticks if its multiplier is inside the friction cone."""
    active = (free.delta > TOUCH).at[0].set(free.delta[0] >= -TOUCH)
    elastic = law_is(contacts, AbstractElasticStickLaw)
    modes = ContactModes(active, active & elastic, jnp.where(free.v_t >= 0, 1.0, -1.0),
                         jnp.full(len(contacts), jnp.inf))
    for i, c in enumerate(contacts):
        if isinstance(c.friction_law, AbstractExactStickLaw):
            lam = stick_multiplier(contacts, free, y0, modes, i)
            fn = free.F_n[i]
            rest = jnp.abs(free.v_t[i]) <= REST
            sticks = active[i] & rest & (jnp.abs(lam) <= c.friction_law.mu * fn) & (fn > 0)
            modes = ContactModes(modes.active, modes.stick.at[i].set(sticks),
                                 modes.sigma.at[i].set(jnp.where(rest, -jnp.sign(lam), modes.sigma[i])),
                                 modes.stick_time)
    return modes


def switch(model: AbstractPlanarModel, contacts: tuple[Contact, ...], q0, t, y, modes: ContactModes,
           event: Int[Array, ""]) -> tuple[Float[Array, " m"], ContactModes]:
    """State and regimes after ``event``, a flat index into the ``(5, k)`` event components (row: the
    :class:`~difimpact._compliant.events.ContactEvent`, column: the contact), at time ``t`` [ms]."""
    n, k = q0.shape[0], len(contacts)
    row, hit = event // k, jnp.eye(k, dtype=bool)[event % k]
    onset, separation = row == ContactEvent.ONSET, row == ContactEvent.SEPARATION
    to_stick, to_slide = row == ContactEvent.STICK, row == ContactEvent.SLIP
    exact, elastic = law_is(contacts, AbstractExactStickLaw), law_is(contacts, AbstractElasticStickLaw)
    free = free_motion(model, contacts, q0, y)
    e = tangential_forces(contacts, free, y, modes)
    lam = jnp.stack([stick_multiplier(contacts, free, y, modes, j) for j in range(k)])
    in_cone = jnp.abs(lam) <= friction_coefficients(contacts, AbstractExactStickLaw) * e.F_n
    sigma = jnp.select(
        [onset, to_stick, to_slide],
        [jnp.where(jnp.abs(e.v_t) <= REST, -jnp.sign(lam), jnp.sign(e.v_t)),
         jnp.where(in_cone, modes.sigma, -jnp.sign(lam)), -jnp.sign(e.F_t)], modes.sigma)
    becomes_stick = to_stick & (in_cone | elastic)
    new = ContactModes(
        active=jnp.where(hit & onset, True, jnp.where(hit & separation, False, modes.active)),
        stick=jnp.select([hit & (separation | to_slide), hit & onset, hit & becomes_stick],
                         [False, elastic, exact | elastic], modes.stick),
        sigma=jnp.where(hit, sigma, modes.sigma),
        stick_time=jnp.where(hit & becomes_stick & jnp.isinf(modes.stick_time), t, modes.stick_time),
    )
    return y.at[z_slice(n, k)].set(_displacements(contacts, e, y[z_slice(n, k)], hit, onset, becomes_stick)), new


def _displacements(contacts, e, z, hit, onset, becomes_stick) -> Float[Array, " k"]:
    """``z`` [mm] after the event: zero at an onset, the displacement of the sliding force on entering stick."""
    z_stick = jnp.stack([
        c.friction_law.stick_displacement(e.F_t[j], e.delta[j]) / MM
        if isinstance(c.friction_law, AbstractElasticStickLaw) else jnp.zeros_like(e.F_t[j])
        for j, c in enumerate(contacts)])
    return jnp.where(hit & onset, 0.0, jnp.where(hit & becomes_stick, z_stick, z))
