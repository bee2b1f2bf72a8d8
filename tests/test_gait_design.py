"""Design gradients of a periodic gait: derivatives of the spectral radius ρ of ``∂P/∂x`` at the fixed point,
and of speed, step length, step time and loss per distance, with respect to foot radius, leg mass position,
mass ratio and slope — against central differences of fixed points re-solved at perturbed designs, the
loss per distance against its closed form ``M g sin γ``, and the closed-form eigenvalues' derivatives against
first-order perturbation theory."""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di

TIGHT = di.StanceTolerances(rtol=1e-12, atol=1e-12)
X_3DEG = jnp.array([-0.271, 1.092, 0.715])  # Goswami's walker on 3°: (q3, q̇3, q̇4) after heel strike
M, G = 5.0, 9.81


def walker(p):
    """Goswami's compass gait (l = 1 m, m = 5 kg) with design ``p = (R, b, m_H/m, slope)``."""
    R, b, ratio, slope = p
    return di.CompassGait(l=1.0, m=M, b=b, m_H=ratio * M, R=R, g=G, slope=slope)


def observe(p, x0):
    """ρ, speed, step length, step time and loss per distance of the period-1 gait found from `x0`."""
    w = walker(p)
    gait = di.periodic_gait(w, x0, options=TIGHT, throw=False)
    rho = di.spectral_radius(di.stride_jacobian(w, gait, options=TIGHT))
    values = jnp.stack([rho, gait.speed, gait.step_length, gait.step_time, gait.loss_per_distance])
    return values, (values, gait.result)


# One compiled function for the derivatives and, through its values, for the re-solved fixed points.
jacobian_and_values = jax.jit(jax.jacfwd(observe, has_aux=True))


@pytest.mark.slow
@pytest.mark.parametrize("design", [
    (0.2, 0.5, 2.0, 3.0),  # round feet: the dominant multipliers a complex pair
    (0.05, 0.65, 2.0, 3.0),  # legs' masses low: one real multiplier beyond −1 (period-1 gait unstable)
    (0.3, 0.35, 1.5, 2.5),
])
def test_design_gradients_vs_resolved_fixed_points(design):
    """∂(ρ, speed, L, T, ΔT/L)/∂(R, b, m_H/m, γ) by forward mode — the implicit-function derivative of the fixed
    point and the second derivatives of the stride map through the events — against central differences of
    fixed points re-solved at ``p ± h``; the loss per distance against ``d(M g sin γ)``."""
    R, b, ratio, slope_deg = design
    p = jnp.array([R, b, ratio, np.radians(slope_deg)])
    d, (values, result) = jacobian_and_values(p, X_3DEG)
    assert result == di.GaitResults.successful
    fd = np.zeros_like(d)
    for i in range(p.shape[0]):
        h = 1e-5 * max(1.0, abs(float(p[i])))
        (_, (plus, ok_plus)), (_, (minus, ok_minus)) = (jacobian_and_values(p.at[i].add(s * h), X_3DEG)
                                                      for s in (1, -1))
        assert ok_plus == di.GaitResults.successful and ok_minus == di.GaitResults.successful
        fd[:, i] = (plus - minus) / (2 * h)
    scale = np.abs(fd).max(axis=1, keepdims=True)  # each quantity's largest derivative: zeros compare to it
    np.testing.assert_allclose(d / scale, fd / scale, rtol=1e-6, atol=1e-6)
    # A passive gait loses at its impacts what gravity gives: ΔT/L = M g sin γ, with M = m (2 + m_H/m).
    total = M * (2 + ratio)
    exact = [0.0, 0.0, M * G * np.sin(p[3]), total * G * np.cos(p[3])]
    np.testing.assert_allclose(values[4], total * G * np.sin(p[3]), rtol=1e-9)
    np.testing.assert_allclose(d[4], exact, rtol=1e-7, atol=1e-7 * total * G)


@pytest.mark.slow
@pytest.mark.parametrize("design", [
    (0.45, 0.65, 2.0, 3.0),  # a gait exists, but Newton from the 3° point-foot gait leaves its basin
    (0.0, 0.5, 2.0, -1.0),  # uphill: no passive gait, the walker falls back
])
def test_failed_gait_is_flagged_under_jacfwd(design):
    """A gait that is not found is flagged by its `result` with finite values under ``jax.jacfwd`` too: the
    implicit-function solve at a failed fixed point does not raise and stop a batch or an optimiser."""
    p = jnp.array([*design[:3], np.radians(design[3])])
    _, (values, result) = jacobian_and_values(p, X_3DEG)
    assert result != di.GaitResults.successful
    assert np.all(np.isfinite(values))


def _perturbation(a):
    """Eigenvalues of `a` and their derivatives ``∂λ/∂a_jk = ū_j v_k / (uᴴ v)`` (left eigenvector ``u``,
    right ``v``; first-order perturbation theory of a simple eigenvalue), by LAPACK."""
    lam, right = np.linalg.eig(a)
    left = np.linalg.inv(right).conj().T  # columns: left eigenvectors, normalised to uᴴ v = 1
    return lam, np.einsum("ji,ki->ijk", left.conj(), right)


@jax.jit
def _closed_form_derivatives(a):
    """Eigenvalues, their Jacobian, and the spectral radius' gradient in reverse and forward mode."""
    return (di.eigenvalues(a), jax.jacfwd(di.eigenvalues)(a), jax.grad(di.spectral_radius)(a),
            jax.jacfwd(di.spectral_radius)(a))


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("k", [2, 3])
def test_eigenvalue_and_spectral_radius_derivatives(seed, k):
    """The closed-form eigenvalues' derivatives equal first-order perturbation theory; so does the spectral
    radius' gradient ``d|λ| = Re(λ̄ dλ) / |λ|`` (for each size, one seed has a complex dominant pair and the
    other a real dominant eigenvalue)."""
    a = np.random.default_rng(seed).normal(size=(k, k))
    lam, dlam = _perturbation(a)
    ours, jac, grad_rev, grad_fwd = (np.asarray(x) for x in _closed_form_derivatives(jnp.asarray(a)))
    order = [int(np.argmin(np.abs(ours - x))) for x in lam]
    np.testing.assert_allclose(ours[order], lam, atol=1e-12)
    np.testing.assert_allclose(jac[order], dlam, atol=1e-9)
    top = np.argmax(np.abs(lam))
    expected = (lam[top].conj() * dlam[top]).real / np.abs(lam[top])
    np.testing.assert_allclose(grad_rev, expected, atol=1e-9)
    np.testing.assert_allclose(grad_fwd, expected, atol=1e-9)


_ROUNDING = """
import json
import jax, numpy as np
jax.config.update("jax_enable_x64", True)
import difimpact as di
a = jax.numpy.asarray(np.random.default_rng(1).normal(size=(3, 3)))
print(json.dumps(np.asarray(jax.jit(jax.grad(di.spectral_radius))(a)).tolist()))
"""


def test_spectral_radius_derivative_does_not_rely_on_equal_rounding():
    """Compiled at LLVM optimisation level 0, XLA computes the moduli of a complex pair twice with different
    rounding; a maximum whose derivative matches by equality (``jnp.max``) then had none and gave NaN. The
    gradient must equal perturbation theory's there too (a fresh process: XLA flags are read once)."""
    a = np.random.default_rng(1).normal(size=(3, 3))
    lam, dlam = _perturbation(a)
    top = np.argmax(np.abs(lam))
    expected = (lam[top].conj() * dlam[top]).real / np.abs(lam[top])
    env = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0"),
               JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", _ROUNDING], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    np.testing.assert_allclose(np.asarray(json.loads(run.stdout.strip().splitlines()[-1])), expected, atol=1e-9)
