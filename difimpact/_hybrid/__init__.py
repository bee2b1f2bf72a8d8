"""Hybrid systems: a vector field integrated in phases ended by events, with a transition at each."""

from .engine import (
    EVENT_SHIFT as EVENT_SHIFT,
    AbstractHybridSystem as AbstractHybridSystem,
    HybridResults as HybridResults,
    HybridSolution as HybridSolution,
    solve_hybrid as solve_hybrid,
)
