"""The ``**Example:**`` sections of the entry points' docstrings: every entry point has one (a short fenced
Python block), and each runs and gives the values its comments state. The examples of one topic run in one test,
one after the other in this process, so that they share compiled programs (the crutch walker's impact maps, the
simplest walker's stride map)."""

import inspect
import re

import numpy as np
import pytest

import difimpact as di
from difimpact._optimise import OptimiseResults

ENTRY_POINTS = ("impact", "frictional_impact", "compliant_impact", "stride", "periodic_gait", "continue_gait", "sweep",
                "minimise", "from_mjcf", "from_urdf", "from_osim", "optimal_gait", "kelly_gait", "solve_nlp",
                "human_gait", "human_tracking_gait")
_EXAMPLE = re.compile(r"\*\*Example:\*\*\n\n```python\n(.*?)\n```", re.S)


def example(name: str) -> str:
    """The code of the ``**Example:**`` section of ``di.<name>``'s docstring."""
    found = _EXAMPLE.findall(inspect.getdoc(getattr(di, name)) or "")
    assert len(found) == 1, f"{name}: one **Example:** section with a ```python block, found {len(found)}"
    return found[0]


def run(name: str, capsys) -> tuple[dict, str]:
    """Run ``di.<name>``'s example in a fresh namespace: that namespace and what it printed."""
    capsys.readouterr()
    ns: dict = {"__name__": f"example_{name}"}
    exec(compile(example(name), f"<{name} example>", "exec"), ns)
    return ns, capsys.readouterr().out


def test_every_entry_point_has_a_short_example():
    for name in ENTRY_POINTS:
        lines = example(name).strip().splitlines()
        assert 3 <= len(lines) <= 8, f"{name}: {len(lines)} lines"
        assert "import difimpact as di" in lines[:3] or any("difimpact as di" in line for line in lines[:3]), name
        assert any(line.startswith("print(") for line in lines), f"{name}: the example shows a value"


def test_impact_examples(capsys):
    """The crutch walker of Font-Llagunes et al. (2012) at q3 = 12°, q̇5 = −0.2 rad/s: sticking impact, Coulomb
    friction, a sweep over μ and the leg angle of least loss without slipping."""
    ns, out = run("impact", capsys)
    np.testing.assert_allclose(ns["hit"].impulses, [14.155, -9.769], atol=1e-3)
    np.testing.assert_allclose([ns["hit"].loss, ns["hit"].xi], [8.121, 0.186], atol=1e-3)
    assert "14.155" in out

    ns, out = run("frictional_impact", capsys)
    hit = ns["hit"]
    assert out.startswith("slide-stick")
    np.testing.assert_allclose([hit.normal_impulse, hit.tangential_impulse, hit.mu_c], [14.155, -9.769, 0.675],
                               atol=1e-3)

    ns, out = run("sweep", capsys)
    np.testing.assert_allclose(np.array(out.strip(" []\n").split(), float), [4.005, 14.155, 14.155], atol=1e-3)

    ns, out = run("minimise", capsys)
    res = ns["res"]
    assert res.result == OptimiseResults.successful
    np.testing.assert_allclose([np.degrees(res.params), res.value], [7.25, 9.87], atol=5e-3)
    assert abs(float(ns["hit"](res.params).mu_c) - 0.6) < 1e-5  # the constraint holds with equality


def test_compliant_impact_example(capsys):
    ns, out = run("compliant_impact", capsys)
    o = ns["out"]
    assert o.result == di.CompliantResults.successful
    np.testing.assert_allclose([o.duration, o.peak_normal_force[0], o.normal_impulse[0]], [0.00398, 6204.0, 14.41],
                               rtol=2e-3)


def test_gait_examples(capsys):
    """The simplest walker of Garcia et al. (1998) at slope 0.009: a stride, its long gait, and the branch."""
    ns, _ = run("stride", capsys)
    step = ns["step"]
    np.testing.assert_allclose(step.x, [-0.2031, 0.2022, 0.0165], atol=1e-4)
    np.testing.assert_allclose([step.step_time, step.step_length], [3.843, 0.4034], atol=1e-3)

    ns, out = run("periodic_gait", capsys)
    assert out.startswith("True")
    np.testing.assert_allclose(ns["gait"].x, [-0.20031, 0.19983, 0.01582], atol=1e-5)
    np.testing.assert_allclose(np.sort(abs(di.floquet_multipliers(ns["gait"]))), [0.0, 0.589, 0.589],
                               atol=1e-3)

    ns, out = run("continue_gait", capsys)
    branch = ns["branch"]
    assert [b.kind for b in branch] == ["orbit"] * len(branch)
    np.testing.assert_allclose([(b.p, b.speed) for b in branch[::3]],
                               [(0.009, 0.1025), (0.0095, 0.1042), (0.0107, 0.1082), (0.012, 0.112)], atol=1e-4)


def test_importer_examples(capsys):
    crutch = di.CrutchWalker()
    q = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    for name in ("from_mjcf", "from_urdf"):
        ns, out = run(name, capsys)
        model = ns["model"]
        assert model.coordinate_names == ("q1", "q2", "q3", "q4", "q5", "q6")
        assert model.point_names == ("P", "H", "S", "E", "Q")
        np.testing.assert_allclose(model.mass_matrix(q), crutch.mass_matrix(q), rtol=1e-9, atol=1e-12)
    ns, out = run("from_osim", capsys)
    assert out.strip() == "10 ('pelvis_tx', 'pelvis_ty', 'pelvis_tilt', 'hip_flexion_r')"


def test_solve_nlp_example(capsys):
    ns, out = run("solve_nlp", capsys)
    sol = ns["sol"]
    assert sol.result == di.NLPResults.successful
    np.testing.assert_allclose(sol.x, [0.9072, 0.8228], atol=1e-4)
    np.testing.assert_allclose(sol.x @ sol.x, 1.5, rtol=1e-8)
    grad = float(out.strip().splitlines()[-1])
    np.testing.assert_allclose(grad, 2 * (1.0 - sol.x[0]), rtol=1e-6)  # ∂L/∂p at the optimum


@pytest.mark.slow
@pytest.mark.stage2
def test_optimal_gait_example(capsys):
    ns, _ = run("optimal_gait", capsys)
    gait = ns["gait"]
    assert gait.result == di.NLPResults.successful
    np.testing.assert_allclose([gait.cost, gait.speed, gait.impact_loss], [138.3, 1.0, 14.87], rtol=1e-3)


@pytest.mark.slow
def test_kelly_gait_example(capsys):
    """Kelly's five-link biped on his mesh (about 40 s of compiling)."""
    ns, _ = run("kelly_gait", capsys)
    np.testing.assert_allclose([ns["gait"].cost, ns["gait"].step_time], [469.55, 0.7], atol=0.01)


@pytest.mark.slow
def test_human_gait_example(capsys):
    """The seven-link human's predicted step at 1.3 m/s on the default mesh (minutes of compiling and solving):
    IPOPT's optimum of the same transcription, 1759.043164 (``benchmarks/_human_ipopt.py``)."""
    ns, out = run("human_gait", capsys)
    assert out.split()[0] == "True"
    np.testing.assert_allclose(float(ns["gait"].cost), 1759.043164, rtol=1e-6)


@pytest.mark.slow
def test_human_tracking_gait_example(capsys):
    """Tracking Winter's normal cadence on the default mesh: IPOPT's optimum 1.6411128, and the knee within the
    measured ±1 SD over at least 90 % of the cycle."""
    ns, out = run("human_tracking_gait", capsys)
    np.testing.assert_allclose(float(ns["gait"].solution.value), 1.6411128, rtol=1e-6)
    assert out.split()[-1] == "True"
