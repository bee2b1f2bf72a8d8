"""Direct collocation of gaits: the transcription's methods and mesh, its structure from the layout, and gaits as
data (contact phases, touchdowns, the impact and the relabelling) solved as one multi-phase program."""

from .contact import ContactGait as ContactGait
from .contact import ContactPhase as ContactPhase
from .guess import retime as retime
from .multiphase import MultiPhaseProblem as MultiPhaseProblem
from .solve import PhasedGait as PhasedGait
from .solve import multiphase_gait as multiphase_gait
