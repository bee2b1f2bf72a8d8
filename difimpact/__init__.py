"""difimpact: differentiable impacts in planar biomechanical multibody systems."""

import importlib.metadata

from ._impact.constrained import (
    constrained_impact as constrained_impact,
    impact as impact,
    ImpactResults as ImpactResults,
    ImpactSolution as ImpactSolution,
    loss_per_distance as loss_per_distance,
)
from ._models import (
    AbstractPlanarModel as AbstractPlanarModel,
    BipedWithTorso as BipedWithTorso,
    CompassGait as CompassGait,
    CrutchWalker as CrutchWalker,
    TreeModel as TreeModel,
)
from ._tree import Body as Body, PlanarTree as PlanarTree, Point as Point

try:
    __version__ = importlib.metadata.version("difimpact")
except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
    __version__ = "0.0.0"
