"""float32 against float64 on the paper cases (issue 8, item 3).

x64 is a global switch, so the float32 side runs in a subprocess that does not enable it; both sides run the
same code (``tests/_float32_cases.py``). Measured relative differences (float32 vs float64, CPU):

- seed 000, q3 = 12°, q̇5 = −0.2 rad/s, μ = 0.75: ``P_n`` 1.4e-6, ``P_t`` 8.8e-7, ``μ_c`` 5.4e-7;
- seed 003, q4 = 30°, left foot sticking: ``ξ_I`` 4.5e-7.

The tolerance below, 2e-5 (about 170 ε of float32), leaves an order of magnitude for other machines.
The stiff compliant Table-3 case (k_n ≈ 1.7e7 N/m^1.5, slide then stick) runs in float32 at rtol 1e-5 and
1e-6: ``P_n`` 14.40832 against 14.40844 N s (8e-6), ``P_t`` −9.89921 against −9.89929 (8e-6). It used to stop at
the slide → stick switch (t ≈ 1.85 ms): the event root find's tolerance (1e-12 ms) was out of float32's reach;
it is now 512 ε of the dtype.
"""

import json
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact

from ._float32_cases import cases

SCRIPT = pathlib.Path(__file__).with_name("_float32_cases.py")
RTOL_FLOAT32 = 2e-5
RTOL_COMPLIANT = 1e-4  # float32 compliant solve at rtol 1e-5 (measured 8e-6)


def _float32(*args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]  # the float32 run's traceback, not only its exit status
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_float32_paper_cases_match_float64():
    single, double = _float32("impulsive", "0"), cases(compliant=False, rtol=0.0)
    assert single["dtype"] == "float32" and double["dtype"] == "float64"
    for key in ("P_n", "P_t", "mu_c", "xi_I", "batched_P_n"):
        assert single[key] == pytest.approx(double[key], rel=RTOL_FLOAT32), key
    # and float64 is the paper's value (CONVENTIONS.md check values, seed 000)
    np.testing.assert_allclose([double["P_n"], double["P_t"], double["mu_c"]], [14.16, -9.77, 0.675], atol=6e-3)


@pytest.mark.slow
def test_float32_compliant_table3_matches_float64():
    single, double = _float32("compliant", "1e-5"), cases(compliant=True, rtol=1e-8)
    assert double["compliant_ok"] and double["compliant_P_n"] == pytest.approx(14.409, abs=1e-3)
    assert single["compliant_ok"], single
    for key in ("compliant_P_n", "compliant_P_t"):
        assert single[key] == pytest.approx(double[key], rel=RTOL_COMPLIANT), key


def _products(jaxpr, found):
    """Every ``dot_general`` of a jaxpr and of the jaxprs nested in its equations (loops, conds, calls, custom
    derivative rules), as ``(precision, source)``."""
    for eqn in getattr(jaxpr, "jaxpr", jaxpr).eqns:
        if eqn.primitive.name == "dot_general":
            where = [f"{f.file_name}:{f.line_num}" for f in eqn.source_info.traceback.frames
                     if "difimpact" in f.file_name]
            found.append((str(eqn.params["precision"]), where[0] if where else str(eqn.source_info.name_stack)))
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(getattr(sub, "jaxpr", sub), "eqns"):
                    _products(sub, found)
    return found


def test_every_matrix_product_is_traced_at_full_precision():
    """On GPUs JAX lets a float32 matrix product run in TF32 (10-bit mantissa) unless it asks for ``HIGHEST``;
    in TF32 the crutch walker's joint angles ``θ = (∂θ/∂q) q`` (one GEMM under ``vmap``) are ~1e-4 rad off and
    ``frictional_impact``'s ground check fails (README, "float32 on a GPU"; ``benchmarks/RESULTS.md``, table 7).
    CPUs ignore the precision, so this checks what the GPU gets:
    the precision of every product in the traced programs of the impulsive map (and its gradient), the KKT
    impact with a unilateral foot, the compliant phase (diffrax's own products included) and a stride map."""
    walker = di.CrutchWalker()
    q, qdot = jnp.zeros(6), jnp.zeros(6)  # traced only: any state of the right shape
    tip, coulomb = tip_contact(), di.Coulomb(0.75)
    biped = di.BipedWithTorso()
    qb, qdotb = jnp.zeros(5), jnp.zeros(5)
    compass = di.CompassGait()
    programs = {
        "frictional_impact under vmap": (jax.vmap(lambda a, b: di.frictional_impact(walker, a, b, "Q", friction=coulomb).qdot_plus),
                                         jnp.stack([q, q]), jnp.stack([qdot, qdot])),
        "its gradient": (jax.grad(lambda a: di.frictional_impact(walker, a, qdot, "Q", friction=coulomb).energy_change), q),
        "impact (KKT, unilateral foot)": (
            lambda a, b: di.impact(biped, a, b, stick=("P_L",), unilateral=("P_R",)).qdot_plus, qb, qdotb),
        "compliant_impact": (lambda a, b: di.compliant_impact(walker, a, b, "Q", normal=tip.normal_law,
                                                              friction=tip.friction_law).normal_impulse, q, qdot),
        "stride": (lambda x: di.stride(compass, x).x, jnp.array([0.2, -1.0, -0.3])),
    }
    for name, (fn, *args) in programs.items():
        products = _products(jax.make_jaxpr(fn)(*args), [])
        assert products, name
        loose = [source for precision, source in products if "HIGHEST" not in precision]
        assert not loose, f"{name}: {len(loose)} of {len(products)} products at default precision, e.g. {loose[:3]}"


def test_constrained_impact_accurate_to_the_conditioning():
    """``constrained_impact`` on seed 003's biped with light legs (``cond(K)`` 1e5…1e9) agrees with LAPACK's
    pivoted LU to ``cond(K) ε`` and reports a leg of 1e-8 kg (rank-deficient to 1e-10) as undetermined."""
    solve = jax.jit(lambda M, A, qd: di.constrained_impact(M, A, qd, throw=False))
    for m in (1e-2, 1e-4, 1e-6, 1e-8):
        model = di.BipedWithTorso(m=m, m_H=20.0, m_T=10.0)
        q, qd = model.pre_impact_state(np.radians(45.0))
        M, A = model.mass_matrix(q), model.contact_jacobian(q, "P_L")
        s = solve(M, A, qd)
        K = np.block([[M, -A.T], [A, np.zeros((2, 2))]])
        ref = qd + np.linalg.solve(K, np.concatenate([np.zeros(5), -A @ qd]))[:5]
        if m < 1e-7:
            assert s.result == di.ImpactResults.undetermined
            continue
        assert s.result == di.ImpactResults.successful
        err = np.max(np.abs(s.qdot_plus - ref)) / np.max(np.abs(ref))
        assert err < 100 * np.linalg.cond(K) * np.finfo(float).eps, (m, err)
