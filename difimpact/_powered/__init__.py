"""Powered gaits: walkers with joint torques and their optimal periodic steps through the exact impact map."""

from .._collocation.stance_terms import PointwiseConstraint as PointwiseConstraint
from .biped import PoweredBiped as PoweredBiped
from .energy import work_balance as work_balance, WorkBalance as WorkBalance
from .optimal import optimal_gait as optimal_gait, OptimalGait as OptimalGait
from .problem import GaitProblem as GaitProblem
from .tracking import (
    tracking_floquet as tracking_floquet,
    tracking_stride as tracking_stride,
    TrackingGait as TrackingGait,
    TrackingOptions as TrackingOptions,
    TrackingStride as TrackingStride,
)
from .walkers import (
    biped_torso_walker as biped_torso_walker,
    five_link_walker as five_link_walker,
    KELLY_GUESS as KELLY_GUESS,
    kelly_gait as kelly_gait,
)
