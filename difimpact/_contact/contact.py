"""A ground contact: a model point with its normal and friction laws."""

import equinox as eqx

from .base import AbstractFrictionLaw, AbstractNormalLaw


class Contact(eqx.Module):
    """A contact of the model point ``point`` with the flat ground ``y = 0``, the one description of a
    contact for every entry point.

    - `point`: a point name of the model.
    - `normal_law`: the compliant normal force (:class:`AbstractNormalLaw`), required by
      :func:`~difimpact.compliant_impact`; ``None`` for a rigid contact (the impulsive maps).
    - `friction_law`: the tangential force (:class:`AbstractFrictionLaw`); ``None`` for a frictionless
      contact. :func:`~difimpact.frictional_impact` needs a :class:`~difimpact.Coulomb` law.
    """

    point: str = eqx.field(static=True)
    normal_law: AbstractNormalLaw | None = None
    friction_law: AbstractFrictionLaw | None = None
