"""The seven-link human walking: multi-phase optimal gaits (predictive and tracking) through the exact heel strike."""

from .gait import HumanGait as HumanGait
from .gait import human_gait as human_gait
from .phases import STEP as HUMAN_STEP
from .tracking import MeasuredGait as MeasuredGait
from .tracking import agreement as gait_agreement
from .tracking import tracking_gait as human_tracking_gait
from .tracking import winter_normal as winter_normal

__all__ = ["HUMAN_STEP", "HumanGait", "MeasuredGait", "gait_agreement", "human_gait", "human_tracking_gait",
           "winter_normal"]
