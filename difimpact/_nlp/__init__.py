"""Nonlinear programming in JAX: an interior-point method that runs under ``jit`` and ``vmap``, differentiable
by the implicit function theorem."""

from .solution import (
    failures as failures,
    NLPOptions as NLPOptions,
    NLPResults as NLPResults,
    NLPSolution as NLPSolution,
)
from .solve import solve_nlp as solve_nlp
