"""The papers' tables and figures (the four papers), registered for `difimpact reproduce` in paper order."""

from . import (
    seed000 as seed000,
    seed000_evolution as seed000_evolution,
    seed001 as seed001,
    seed001_compass as seed001_compass,
    seed001_crutch as seed001_crutch,
    seed002 as seed002,
)
from . import measured as measured  # noqa: I001 (registration order: the measured heel strikes after Fig. 3)
from . import seed002_blocking as seed002_blocking
from . import seed003 as seed003
from . import gaits as gaits  # noqa: I001 (registration order: simplest models first)
from . import gait_compass as gait_compass
from . import gait_kuo as gait_kuo
from . import gait_five_link as gait_five_link
from . import gait_biped_torso as gait_biped_torso
from . import gait_human as gait_human
from . import gait_human_tracking as gait_human_tracking
from .base import REGISTRY as REGISTRY, Check as Check, Experiment as Experiment, Outcome as Outcome, select as select
