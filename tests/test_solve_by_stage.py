"""A whole optimal gait solved with its Newton matrices factored by stage (:mod:`difimpact._nlp.stagewise`, block
cyclic reduction: the choice off a CPU, forced here) equals the banded solve's: Kelly's five-link biped on 10
segments, its optimum, step and iterations."""

import jax
import numpy as np
import pytest

import difimpact as di
from difimpact._nlp import newton


@pytest.mark.slow  # two solve programs compiled
@pytest.mark.stage2
def test_kelly_by_stage_equals_the_band(monkeypatch):
    band = di.kelly_gait(segments=10)
    monkeypatch.setattr(newton, "by_stage", lambda sparsity: True)
    newton.structure.cache_clear()
    jax.clear_caches()  # the program traced anew, its Newton matrices by stage
    try:
        staged = di.kelly_gait(segments=10)
    finally:
        newton.structure.cache_clear()
        jax.clear_caches()
    assert bool(staged.result == band.result)
    np.testing.assert_allclose(float(staged.cost), float(band.cost), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(staged.solution.x), np.asarray(band.solution.x), rtol=1e-6, atol=1e-8)
    assert abs(int(staged.iterations) - int(band.iterations)) <= 2
