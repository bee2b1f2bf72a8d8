"""A whole optimal gait solved with its Newton matrices factored by stage (:mod:`difimpact._nlp.stagewise`, block
cyclic reduction: the choice off a CPU, forced here) equals the banded solve's: Kelly's five-link biped on 10
segments, its optimum, step and iterations; and the gradient of the optimal cost with respect to the step length,
through the reduction (the implicit function theorem's solve), against central differences of the band's re-solved
optima."""

import jax
import numpy as np
import pytest

import difimpact as di
from difimpact._nlp import newton

L, H = 0.5, 1e-4


def _kelly(step_length):
    return di.kelly_gait(segments=10, step_length=step_length)


@pytest.mark.slow  # two solve programs compiled
@pytest.mark.stage2
def test_kelly_by_stage_equals_the_band(monkeypatch):
    by_band = jax.jit(_kelly)
    band = by_band(L)
    costs = [float(by_band(L + s * H).cost) for s in (1.0, -1.0)]  # the same program, re-solved
    asked = []
    monkeypatch.setattr(newton, "by_stage", lambda sparsity: asked.append(sparsity.stages is not None) or True)
    newton.structure.cache_clear()
    jax.clear_caches()  # the programs traced anew, their Newton matrices by stage
    try:
        staged = jax.jit(_kelly)(L)
        gradient = jax.jit(jax.grad(lambda step_length: _kelly(step_length).cost))(L)
    finally:
        newton.structure.cache_clear()
        jax.clear_caches()
    assert asked and all(asked)  # the programs were traced anew, by stage
    assert bool(staged.result == band.result)
    np.testing.assert_allclose(float(staged.cost), float(band.cost), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(staged.solution.x), np.asarray(band.solution.x), rtol=1e-6, atol=1e-8)
    assert abs(int(staged.iterations) - int(band.iterations)) <= 2
    np.testing.assert_allclose(float(gradient), (costs[0] - costs[1]) / (2 * H), rtol=1e-5)
