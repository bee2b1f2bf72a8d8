"""The papers' tables and figures (seeds 000–003), registered for `difimpact reproduce` in paper order."""

from . import seed000 as seed000, seed001 as seed001, seed002 as seed002, seed003 as seed003
from . import measured as measured
from . import gaits as gaits  # noqa: I001 (registration order: simplest models first)
from . import gait_compass as gait_compass
from .base import REGISTRY as REGISTRY, Check as Check, Experiment as Experiment, Outcome as Outcome, select as select
