"""difimpact: differentiable impacts in planar biomechanical multibody systems."""

import importlib.metadata

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
