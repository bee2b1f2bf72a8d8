"""A ground contact: a model point with a normal law and an optional friction law."""

import equinox as eqx

from .base import AbstractFrictionLaw, AbstractNormalLaw


class Contact(eqx.Module):
    """A ground contact at the model point ``point`` with a normal law and an optional friction law
    (``None``: frictionless)."""

    point: str = eqx.field(static=True)
    normal_law: AbstractNormalLaw
    friction_law: AbstractFrictionLaw | None = None
