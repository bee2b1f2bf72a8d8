"""The documentation: the site builds with ``mkdocs build --strict`` (a broken link, snippet or API reference
fails), every public name is in its API reference, and the README's runnable examples (the opening one, your own
model, the importers, the grid sweep) run, give seed 000's check values, and their gradients agree with finite
differences."""

import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np

import difimpact

ROOT = Path(__file__).parent.parent


def _hooks():
    spec = importlib.util.spec_from_file_location("difimpact_docs", ROOT / "docs" / "_hooks" / "difimpact_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mkdocs_build_strict(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                          "-d", str(site)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    api = (site / "api" / "index.html").read_text()
    names = _hooks().public_names(difimpact)
    assert len(names) > 40
    missing = [n for n in names if f'id="difimpact.{n}"' not in api]
    assert not missing, f"public names without an API entry: {missing}"
    for page in ("own-model", "reproduction", "bad-input", "citing"):  # the README snippets were included
        assert "--8&lt;--" not in (site / page / "index.html").read_text()


def _runnable_readme_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"<!-- test: run -->\n```python\n(.*?)```", text, flags=re.S)


def test_readme_examples():
    blocks = _runnable_readme_blocks()
    assert len(blocks) >= 4, "the README's opening, own-model, import and sweep blocks are marked <!-- test: run -->"
    ns: dict = {"__name__": "readme"}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), ns)
    # The opening example: seed 000's check values at q3 = 12°, q̇5 = −0.2 rad/s, μ = 0.75 (CONVENTIONS.md).
    hit = ns["hit"]
    np.testing.assert_allclose([hit.normal_impulse, hit.tangential_impulse, hit.mu_c], [14.16, -9.77, 0.675],
                               atol=6e-3)
    # The grid sweep at the same state: μ = 0.75 and 1 ≥ μ_c stick, as the single call does; μ = 0.5 slides.
    P_n = ns["P_n"]
    np.testing.assert_allclose(P_n[3, 0, 1:], float(hit.normal_impulse), rtol=1e-12)
    assert P_n[3, 0, 0] < 0.5 * float(hit.normal_impulse)
    di, leg, pre_impact, with_mass = ns["di"], ns["leg"], ns["pre_impact"], ns["with_mass"]
    assert abs(float(leg.point(ns["q"], "foot")[1])) < 1e-9  # the root find put the foot on the ground

    # The README's own two gradients, evaluated as it does (eagerly: the programs it compiled are reused).
    loss = lambda q4: di.energy_loss(leg, *pre_impact(q4), stick=("foot",))  # noqa: E731
    q4, h = math.radians(15.0), 1e-6
    fd = (loss(q4 + h) - loss(q4 - h)) / (2 * h)
    np.testing.assert_allclose(jax.grad(loss)(q4), fd, rtol=1e-6)

    q, qdot, m0 = ns["q"], ns["qdot"], leg.planar_tree.mass
    mass_loss = lambda m: di.energy_loss(with_mass(m), q, qdot, stick=("foot",))  # noqa: E731
    fd = [(mass_loss(m0.at[i].add(h)) - mass_loss(m0.at[i].add(-h))) / (2 * h) for i in range(2)]
    np.testing.assert_allclose(jax.grad(mass_loss)(m0), fd, rtol=1e-6)


def test_bodies_by_name_equal_bodies_by_index():
    by_name = difimpact.PlanarTree.build(4, [
        difimpact.Body(name="a", parent=None, coord=2, mass=1.0, com=(0.3, 0.0)),
        difimpact.Body(name="b", parent="a", coord=3, mass=2.0, attach=(0.5, 0.0)),
        difimpact.Body(name="c", parent="a", coord=None, mass=0.5, attach=(0.2, 0.1))],
        [difimpact.Point(name="p", body="b", local=(0.4, 0.0))])
    by_index = difimpact.PlanarTree.build(4, [
        difimpact.Body("a", -1, 2, 1.0, com=(0.3, 0.0)), difimpact.Body("b", 0, 3, 2.0, attach=(0.5, 0.0)),
        difimpact.Body("c", 0, -1, 0.5, attach=(0.2, 0.1))], [difimpact.Point("p", 1, (0.4, 0.0))])
    assert (by_name.parent, by_name.coord, by_name.point_body) == (by_index.parent, by_index.coord,
                                                                    by_index.point_body) == ((-1, 0, 0), (2, 3, -1), (1,))
    try:
        difimpact.PlanarTree.build(4, [difimpact.Body(name="a", parent="z", coord=2, mass=1.0)],
                                   [difimpact.Point(name="p", body="a")])
    except ValueError as err:
        assert "'z'" in str(err) and "'a'" in str(err)
    else:
        raise AssertionError("an unknown parent name must raise")
