"""Contact laws: what happens in finite time at one contact."""

from .base import (
    AbstractElasticStickLaw as AbstractElasticStickLaw,
    AbstractExactStickLaw as AbstractExactStickLaw,
    AbstractFrictionLaw as AbstractFrictionLaw,
    AbstractNormalLaw as AbstractNormalLaw,
    AbstractSmoothFrictionLaw as AbstractSmoothFrictionLaw,
    AbstractStickSlipLaw as AbstractStickSlipLaw,
)
from .contact import Contact as Contact
from .coulomb import Coulomb as Coulomb
from .hertz import (
    damping_from_restitution as damping_from_restitution,
    effective_modulus as effective_modulus,
    hertz_stiffness as hertz_stiffness,
    mindlin_stiffness as mindlin_stiffness,
)
from .hunt_crossley import HuntCrossley as HuntCrossley
from .kelvin_voigt import KelvinVoigt as KelvinVoigt
from .regularised_coulomb import RegularisedCoulomb as RegularisedCoulomb
from .tangential_spring import TangentialSpring as TangentialSpring
