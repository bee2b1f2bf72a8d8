"""Models from and to files: MJCF (MuJoCo), URDF and OpenSim ``.osim`` in, one module per format; MJCF and URDF
out (``writer.py``)."""

from .mjcf import from_mjcf as from_mjcf
from .osim import from_osim as from_osim
from .urdf import from_urdf as from_urdf
from .writer import to_mjcf as to_mjcf
from .writer import to_urdf as to_urdf
