"""Models from and to files: MJCF (MuJoCo), URDF and OpenSim ``.osim``, one module per format."""

from .mjcf import from_mjcf as from_mjcf, to_mjcf as to_mjcf
from .urdf import from_urdf as from_urdf, to_urdf as to_urdf
from .osim import from_osim as from_osim
