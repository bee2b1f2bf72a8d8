"""The state of the compliant contact phase: its units, the layout of the integrated vector, the regimes."""

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import Array, Bool, Float

MS = 1e-3  # time unit of the integration [s]
MM = 1e-3  # length unit of the displacement states [m]


class PhaseState(eqx.Module):
    """The integrated state, a flat vector in mm and ms (the relative tolerance then acts on the
    millimetre-scale indentation, not on metre-scale coordinates), read by name:

    - `dq`: ``q − q₀`` [mm, mrad]; `qdot`: ``q̇`` [m/s = mm/ms];
    - per contact, `P_n`, `P_t`: impulses of the normal and tangential forces [N s]; `W_n`, `W_t`: their
      works ``∫F_n v_n dt``, ``∫F_t v_t dt`` [J]; `z`: the tangential displacement of an elastic-stick
      friction law [mm].
    """

    dq: Float[Array, " n"]
    qdot: Float[Array, " n"]
    P_n: Float[Array, " k"]
    P_t: Float[Array, " k"]
    W_n: Float[Array, " k"]
    W_t: Float[Array, " k"]
    z: Float[Array, " k"]

    @classmethod
    def unpack(cls, y: Float[Array, " 2n+5k"], n: int, k: int) -> "PhaseState":
        P_n, P_t, W_n, W_t, z = jnp.reshape(y[2 * n:], (5, k))
        return cls(y[:n], y[n:2 * n], P_n, P_t, W_n, W_t, z)


def z_slice(n: int, k: int) -> slice:
    """Where the displacements ``z`` lie in the flat state."""
    return slice(2 * n + 4 * k, None)


class ContactModes(eqx.Module):
    """The regimes of the contacts, one entry per contact: `active` (in contact), `stick` (a stick–slip
    law in its stick regime), `sigma` (``±1``, the sliding direction), and `stick_time`, the time [ms] of
    its first slide → stick switch (``inf`` before)."""

    active: Bool[Array, " k"]
    stick: Bool[Array, " k"]
    sigma: Float[Array, " k"]
    stick_time: Float[Array, " k"]

    @classmethod
    def open(cls, k: int) -> "ContactModes":
        """Every contact open, sliding along +x, never stuck."""
        no = jnp.zeros(k, dtype=bool)
        return cls(no, no, jnp.ones(k), jnp.full(k, jnp.inf))
