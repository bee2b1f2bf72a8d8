"""One way to fail (issue 36, item 1): every public entry point with a `throw` raises by default, every results
enumeration extends `difimpact.RESULTS` and none defines a non-finite item of its own (optimistix's `nonfinite`
serves all), the names of 0.1 are gone (0.2.0) and a solution's name never differs from an enumeration's by one
letter (`OptimiseSolution`, its former name deprecated until 0.3), the frictional regimes are an enumeration, and
`continue_gait` returns its failures as a result."""

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
    """`obj` if it is a function, or the constructor, call and public methods of a class (enumerations aside)."""
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


@pytest.mark.parametrize("cls, old", [
    (di.ImpactResults, "non_finite"),
    (di.FrictionalImpactResults, "non_finite"),
    (di.NLPResults, "nonfinite_values"),
    (di.OptimiseResults, "non_finite_objective"),
    (di.OptimiseResults, "non_finite_constraints"),
    (di.OptimiseResults, "non_finite_gradient"),
    (di.OptimiseResults, "non_finite_step"),
])
def test_former_item_names_are_removed(cls, old):
    """0.2.0 removed the items' names of 0.1 (the CHANGELOG gives each one's replacement)."""
    assert not hasattr(cls, old)


def test_no_solution_and_enumeration_one_letter_apart():
    """A name ending in ``Result`` is never the singular of an enumeration ``…Results``: the solution of
    :func:`minimise` is ``OptimiseSolution``; ``OptimiseResult`` names it until 0.3, with a warning at the
    caller's line."""
    names = set(_public())
    assert {n for n in names if n + "s" in names} == set()
    with pytest.warns(DeprecationWarning, match="OptimiseSolution") as record:
        assert di.OptimiseResult is di.OptimiseSolution
    assert record[0].filename == __file__
    assert not hasattr(di, "FRICTIONAL_REGIMES")  # 0.1's regimes: `FrictionalRegime`


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
    assert [di.FrictionalRegime[getattr(di.FrictionalRegime, n)] for n in REGIMES] == [
        "stick", "slide", "slide-reversal", "slide-stick", "slide-from-rest"]
    assert not hasattr(hit, "regime_code")


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
