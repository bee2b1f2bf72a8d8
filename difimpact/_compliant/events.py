"""The events of the compliant contact phase, one component per event and contact, each positive while the
phase goes on and scaled to O(1): indentation in mm (``δ / 1 mm``), velocities in m/s, forces in units of the
normal law's force at ``δ = 1 mm``."""

import enum

import jax.numpy as jnp

from .._contact import AbstractStickSlipLaw, Contact
from .._contact.base import DELTA_REF
from .._custom_types import Array, Float
from .dynamics import ContactEvaluation, friction_coefficients, law_is
from .state import ContactModes

BIG = 1e3  # value of an inactive event component


class ContactEvent(enum.IntEnum):
    """The events, in the order of the rows of :func:`event_components`."""

    ONSET = 0  # an open contact closes: δ crosses 0 upward
    SEPARATION = 1  # a closed contact opens: δ or the normal law's margin crosses 0
    STICK = 2  # a sliding contact stops sliding: σ v_t reaches 0
    SLIP = 3  # a sticking contact starts sliding: μ F_n − |F_t| reaches 0
    END = 4  # the end of the phase: v_n = 0 of the first contact (end of compression)


def event_components(contacts: tuple[Contact, ...], e: ContactEvaluation, modes: ContactModes, end: str
                     ) -> Float[Array, "5 k"]:
    """The components, one row per :class:`ContactEvent` and one column per contact; an inactive one is
    ``BIG``. With ``end="separation"`` the phase ends at the first contact's separation instead of ``END``
    (its transition says so)."""
    big = jnp.full_like(e.delta, BIG)
    margin = jnp.stack([c.normal_law.margin(e.delta[i], -e.v_n[i]) for i, c in enumerate(contacts)])
    stick_slip = law_is(contacts, AbstractStickSlipLaw)
    mu = friction_coefficients(contacts, AbstractStickSlipLaw)
    fref = jnp.stack([c.normal_law.reference_force() for c in contacts])
    sliding = modes.active & stick_slip & ~modes.stick
    sticking = modes.active & stick_slip & modes.stick
    onset = jnp.where(modes.active, big, -e.delta / DELTA_REF)
    separation = jnp.where(modes.active, jnp.minimum(e.delta / DELTA_REF, margin), big)
    to_stick = jnp.where(sliding, modes.sigma * e.v_t, big)
    to_slide = jnp.where(sticking, (mu * e.F_n - jnp.abs(e.F_t)) / fref, big)
    if end == "compression":
        finish = jnp.where(modes.active[0], -e.v_n[0], BIG)
        separation = separation.at[0].set(jnp.where(modes.active[0], BIG, separation[0]))
    else:
        finish = BIG
    finish = big.at[0].set(finish)
    return jnp.stack([onset, separation, to_stick, to_slide, finish])
