"""A ground contact: a model point with its normal and friction laws."""

import equinox as eqx

from .._validation import instance
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

    def __check_init__(self):
        if not isinstance(self.point, str):
            raise TypeError(f"`point` must be a point name (a string), got {self.point!r}.")
        if self.normal_law is not None:
            instance("normal_law", self.normal_law, AbstractNormalLaw, "HuntCrossley(1e6)")
        if self.friction_law is not None:
            instance("friction_law", self.friction_law, AbstractFrictionLaw, "Coulomb(0.5)")
