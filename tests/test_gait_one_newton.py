"""`continue_gait` and `periodic_gait` share one Newton (`difimpact._gait.fixed_point.newton`) and one function
of the multipliers (`difimpact._gait.stability.multipliers`): the gait carries the Jacobian of its stride map at
the fixed point, equal to a fresh ``jax.jacfwd`` there, and on the compass gait's cascade (Goswami, Thuilot &
Espiau 1998) both paths find the same fixed points and multipliers, on the period-1 branch, at its period
doubling and on the period-2 branch born there."""

import jax
import numpy as np
import pytest

import difimpact as di
from difimpact._gait.stability import multipliers

X_3DEG = np.array([-0.271, 1.092, 0.715])  # the 3° gait of the a = b = 0.5 m, m_H/m = 2 walker


def _compass(slope):
    return di.CompassGait(l=1.0, m=5.0, b=0.5, m_H=10.0, R=0.0, g=9.81, slope=slope)


@pytest.mark.slow
@pytest.mark.stage2
def test_the_gait_carries_its_stride_jacobian():
    """``floquet_multipliers(gait)`` takes the Jacobian the gait carries (no options, no walker): it equals
    ``jax.jacfwd`` of the stride map at the fixed point with the gait's options (the form of 0.1 with the walker
    and options is removed)."""
    walker = _compass(np.radians(3.0))
    gait = di.periodic_gait(walker, X_3DEG)
    assert gait.result == di.GaitResults.successful and gait.options == di.StanceTolerances()
    fresh = jax.jacfwd(lambda x: di.stride_power(walker, x, options=gait.options))(gait.x)
    np.testing.assert_allclose(gait.jacobian, fresh, rtol=0, atol=1e-8)
    mu = di.floquet_multipliers(gait)
    np.testing.assert_allclose(mu, multipliers(fresh), rtol=0, atol=1e-8)
    with pytest.raises(TypeError):
        di.floquet_multipliers(walker, gait, options=gait.options)


@pytest.fixture(scope="module")
def cascade():
    return di.continue_gait(_compass, X_3DEG, np.radians(3.0), np.radians(6.0), step=0.15, max_step=0.15,
                            bisections=6, max_points=12)


@pytest.mark.slow  # minutes of compiling (the continuation's and periodic_gait's programs, periods 1 and 2)
def test_continuation_and_periodic_gait_agree_on_the_cascade(cascade):
    kinds = {(b.kind, b.period) for b in cascade}
    assert ("period-doubling", 1) in kinds and ("orbit", 2) in kinds
    picked = [b for b in cascade if b.kind == "period-doubling"][:1] + [b for b in cascade if b.kind == "orbit"][::4]
    for b in picked:
        walker = _compass(b.p)
        gait = di.periodic_gait(walker, b.x, period=b.period)
        assert gait.result == di.GaitResults.successful
        np.testing.assert_allclose(gait.x, b.x, rtol=0, atol=1e-8)
        mu = np.asarray(di.floquet_multipliers(gait))  # the gait's own Jacobian; a conjugate pair in either order
        np.testing.assert_allclose(np.sort(mu.real), np.sort(b.multipliers.real), rtol=0, atol=1e-6)
        np.testing.assert_allclose(np.sort(mu.imag), np.sort(b.multipliers.imag), rtol=0, atol=1e-6)
