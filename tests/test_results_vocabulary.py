"""One way to fail (issue 36, item 1): every public entry point with a `throw` raises by default, every results
enumeration extends `difimpact.RESULTS` and none defines a non-finite item of its own (optimistix's `nonfinite`
serves all), the former names still work with a `DeprecationWarning`, the frictional regimes are an enumeration,
and `continue_gait` returns its failures as a result."""

import inspect

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
import pytest

import difimpact as di

REGIMES = ("stick", "slide", "slide_reversal", "slide_stick", "slide_from_rest")  # in the order of their codes


def _public() -> dict:
    names = getattr(di, "__all__", None) or [n for n in vars(di) if not n.startswith("_")]
    return {n: getattr(di, n) for n in names if not inspect.ismodule(getattr(di, n))}


def _functions(obj):
    """`obj` if it is a function, or the constructor, call and public methods of a class (enumerations aside:
    their deprecated names warn when read)."""
    if not inspect.isclass(obj):
        return [obj] if callable(obj) else []
    if issubclass(obj, eqx.Enumeration):
        return []
    names = ["__init__", "__call__"] + [m for m in vars(obj) if not m.startswith("_")]
    return [f for f in (inspect.getattr_static(obj, m, None) for m in names) if callable(f)]


def _enumerations(root=eqx.Enumeration):
    """Every enumeration class defined in difimpact (imported with it), below `root`."""
    found = set()
    for sub in type.__subclasses__(root):
        if sub.__module__.startswith("difimpact"):
            found.add(sub)
        found |= _enumerations(sub)
    return found


def test_every_throw_defaults_to_true():
    defaults = {}
    for name, obj in _public().items():
        for f in _functions(obj):
            try:
                parameters = inspect.signature(f).parameters
            except (TypeError, ValueError):
                continue
            if "throw" in parameters:
                defaults[f"{name}.{getattr(f, '__name__', '')}"] = parameters["throw"].default
    assert {k for k, v in defaults.items() if v is not True} == set()
    for name in ("impact", "frictional_impact", "constrained_impact", "compliant_impact", "pushoff_impact", "stride",
                 "periodic_gait", "continue_gait", "tracking_stride", "tracking_floquet", "optimal_gait",
                 "kelly_gait", "solve_nlp", "minimise"):
        assert any(k.startswith(name + ".") for k in defaults), name


def test_results_have_one_root_and_one_nonfinite_item():
    enumerations = _enumerations()
    results = {cls for cls in enumerations if cls is not di.FrictionalRegime}
    public = {obj for name, obj in _public().items() if name.endswith("Results")}
    assert public <= results and di.FrictionalRegime in enumerations
    assert {cls.__name__ for cls in results if not issubclass(cls, di.RESULTS) and cls is not di.RESULTS} == set()
    inherited = set(optx.RESULTS._name_to_item)  # `nonfinite` and lineax's `nonfinite_input`
    for cls in results:
        assert "nonfinite" in cls._name_to_item
        assert {n for n in cls._name_to_item if "finite" in n} <= inherited, cls.__name__


@pytest.mark.parametrize("cls, old, new", [
    (di.ImpactResults, "non_finite", "nonfinite"),
    (di.FrictionalImpactResults, "non_finite", "nonfinite"),
    (di.NLPResults, "nonfinite_values", "nonfinite"),
    (di.OptimiseResults, "non_finite_objective", "nonfinite"),
    (di.OptimiseResults, "non_finite_constraints", "nonfinite"),
    (di.OptimiseResults, "non_finite_gradient", "nonfinite"),
    (di.OptimiseResults, "non_finite_step", "diverged"),
])
def test_former_item_names_still_work_and_warn(cls, old, new):
    with pytest.warns(DeprecationWarning, match=f"`{cls.__name__}.{old}` is deprecated"):
        item = getattr(cls, old)
    assert item == getattr(cls, new)
    assert isinstance(item, cls)


def test_frictional_regimes_are_an_enumeration():
    """Three impacts of a unit point mass on ``M = I`` (``μ_c = 0``): at rest tangentially it sticks; sliding
    at ``v_t = 1`` with ``μ = 0.1`` it keeps sliding; at ``v_t = 0.05`` it stops at ``P_n = 0.5`` and sticks."""
    hit = jax.vmap(lambda vt: di.frictional_impact_map(jnp.eye(2), jnp.array([0.0, 1.0]), jnp.array([1.0, 0.0]),
                                                       jnp.stack([vt, -1.0]), 0.1))(jnp.array([0.0, 1.0, 0.05]))
    assert hit.regime_name.tolist() == ["stick", "slide", "slide-stick"]
    np.testing.assert_array_equal(hit.regime == di.FrictionalRegime.slide_stick, [False, False, True])
    first = jax.tree.map(lambda x: x[0], hit)
    assert first.regime_name == "stick" and bool(first.regime == di.FrictionalRegime.stick)
    assert di.FrictionalRegime[first.regime] == "stick"
    with pytest.warns(DeprecationWarning, match="FRICTIONAL_REGIMES") as record:
        names = di.FRICTIONAL_REGIMES
    assert record[0].filename == __file__  # the warning names the caller's line
    assert names == tuple(di.FrictionalRegime[getattr(di.FrictionalRegime, n)] for n in REGIMES)
    with pytest.warns(DeprecationWarning, match="regime_code") as record:
        codes = hit.regime_code
    assert record[0].filename == __file__
    assert [names[c] for c in np.asarray(codes)] == ["stick", "slide", "slide-stick"]


N, L, M, G = 8, 1.0, 1.0, 9.81  # McGeer's rimless wheel: it falls back below γ ≈ 0.068


def _wheel(slope):
    return di.RimlessWheel(N, l=L, m=M, g=G, slope=slope)


def _omega(slope):
    """McGeer (1990): ω⁺ = cot 2α √(4 (g/l) sin α sin γ), α = π/N."""
    alpha = np.pi / N
    return 1 / np.tan(2 * alpha) * np.sqrt(4 * G / L * np.sin(alpha) * np.sin(slope))


def test_continue_gait_returns_its_failures_as_a_result():
    fell = di.GaitResults.fell_backward
    none = di.continue_gait(_wheel, [_omega(0.05)], 0.05, 0.08, throw=False)  # no gait at the start
    assert isinstance(none, di.GaitBranch) and list(none) == [] and none.result == fell
    with pytest.raises(eqx.EquinoxRuntimeError, match="fell back"):
        di.continue_gait(_wheel, [_omega(0.05)], 0.05, 0.08)
    down = di.continue_gait(_wheel, [_omega(0.08)], 0.08, 0.04, step=0.01, throw=False)  # gaits end at γ ≈ 0.068
    assert down.result == fell and len(down) >= 3
    assert all(0.06 < b.p <= 0.08 and b.kind == "orbit" for b in down)
    ok = di.continue_gait(_wheel, [_omega(0.08)], 0.08, 0.075, step=0.01)
    assert ok.result == di.GaitResults.successful and ok[-1].p == 0.075 and isinstance(ok[:1] + ok, list)
    with pytest.raises(ValueError, match="`period`"):  # bad input at the Python edge raises whatever `throw`
        di.continue_gait(_wheel, [_omega(0.08)], 0.08, 0.075, period=0, throw=False)
