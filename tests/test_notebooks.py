"""Every example notebook runs top to bottom (issue 5: notebooks executed in CI at small sizes)."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from .conftest import KERNEL_CACHE_ARGS

NOTEBOOKS = Path(__file__).parent.parent / "notebooks"


@pytest.mark.parametrize("name", [
    "compass_foot_radius",
    "biped_torso",
    "seven_link_ankle_blocking",
    # Two compliant compilations (the grid, and the forward-mode gradient of the optimiser steps): 2 min on 2 cores.
    "crutch_peak_force",
    # Two compilations through a gait's fixed point (the forward-mode gradient of the spectral radius inside the
    # optimiser, the gait and its multipliers for warm starts and grid): ~230 CPU-s, past the CI budget.
    pytest.param("gait_design", marks=pytest.mark.slow),
])
def test_notebook_runs(name):
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}},
                   extra_arguments=KERNEL_CACHE_ARGS).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
