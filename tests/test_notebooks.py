"""The example notebooks run top to bottom (issue 5: notebooks executed in CI at small sizes). The optimisation
examples whose problems tests/test_optimise.py solves (compass foot radius, biped torso, seven-link ankle
blocking) run there, after the tests, from the programs those tests compiled."""

import pytest

from .helpers import run_notebook


@pytest.mark.parametrize("name", [
    # Two compliant compilations (the grid, and the forward-mode gradient of the optimiser steps): ~1 min on 2 cores;
    # its problem (`crutch_peak_force`) is checked in tests/test_optimise.py and tests/test_objectives.py.
    pytest.param("crutch_peak_force", marks=pytest.mark.slow),
    # Two compilations through a gait's fixed point (the forward-mode gradient of the spectral radius inside the
    # optimiser, the gait and its multipliers for warm starts and grid): ~230 CPU-s, past the CI budget.
    pytest.param("gait_design", marks=pytest.mark.slow),
    pytest.param("powered_gaits", marks=pytest.mark.slow),  # a vmapped gradient of an NLP solve: ~2 CPU-min
])
def test_notebook_runs(name):
    run_notebook(name)
