"""The papers' tables and figures (seeds 000–003), registered for `difimpact reproduce`."""

from .base import REGISTRY as REGISTRY, Check as Check, Experiment as Experiment, Outcome as Outcome, select as select
from . import seed003 as seed003  # noqa: E402  (registers its experiments)
from . import seed002 as seed002  # noqa: E402
from . import seed001 as seed001  # noqa: E402
from . import seed000 as seed000  # noqa: E402
