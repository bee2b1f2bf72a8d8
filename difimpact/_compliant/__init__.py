"""The compliant contact phase: contact forces in finite time, integrated in phases by the hybrid engine."""

from .solve import (
    compliant_impact as compliant_impact,
    CompliantResults as CompliantResults,
    CompliantSolution as CompliantSolution,
    History as History,
)
