"""The seven-link human walking: multi-phase optimal gaits (predictive and tracking) through the exact heel strike."""

from .gait import HumanGait as HumanGait
from .gait import human_gait as human_gait
