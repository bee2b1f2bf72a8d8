"""Powered gaits: walkers with joint torques and their optimal periodic steps through the exact impact map."""

from .biped import PoweredBiped as PoweredBiped
from .optimal import optimal_gait as optimal_gait, OptimalGait as OptimalGait
from .problem import GaitProblem as GaitProblem
