"""Large vmapped batches never hang: a 20 000-state ``jax.jit(jax.vmap(impact))`` of the biped with torso (stick
``P_L``, unilateral ``P_R``: 2 active sets, each a KKT solve and two rank checks) and a 100 000-set chunked
``sweep`` of the same, ten times each, every run in a fresh process pinned to 2 CPUs with a timeout (a deadlocked
XLA CPU thread pool shows up as a timeout, not as a wrong number). Slow: run with ``-m slow -s`` to see timings.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

RUNS = 10
TIMEOUT_S = 600

CHILD = textwrap.dedent(
    """
    import json, sys, time
    import jax, numpy as np
    jax.config.update("jax_enable_x64", True)
    import difimpact as di

    kind, n = sys.argv[1], int(sys.argv[2])
    model = di.BipedWithTorso()

    def xi(p):
        q, qd = model.pre_impact_state(p["q4"], p["q5"])
        s = di.impact(model, q, qd, stick=("P_L",), unilateral=("P_R",), throw=False)
        return {"xi": s.xi, "ok": s.result == di.ImpactResults.successful}

    rng = np.random.default_rng(0)
    batch = {"q4": rng.uniform(np.deg2rad(10.0), np.deg2rad(50.0), n), "q5": rng.uniform(0.0, np.deg2rad(30.0), n)}
    start = time.perf_counter()
    if kind == "vmap":
        run = jax.jit(jax.vmap(xi)).lower(batch).compile()
    else:
        run = lambda batch: di.sweep(xi, batch, chunk_size=4096)
        run({k: v[:1] for k, v in batch.items()})  # compiles the chunk's program
    compiled = time.perf_counter()
    out = jax.tree.map(np.asarray, jax.block_until_ready(run(batch)))
    done = time.perf_counter()
    one = jax.jit(xi)({k: v[n // 3] for k, v in batch.items()})
    print(json.dumps({"compile": compiled - start, "run": done - compiled, "ok": int(out["ok"].sum()),
                      "sum": float(out["xi"].sum()), "member": float(out["xi"][n // 3]),
                      "member_alone": float(one["xi"])}))
    """
)


def _two_cpus():
    cpus = sorted(os.sched_getaffinity(0))[:2]
    os.sched_setaffinity(0, cpus)


@pytest.mark.slow
@pytest.mark.parametrize("kind, n", [("vmap", 20_000), ("sweep", 100_000)])
def test_large_batches_never_hang(kind, n):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=root)
    runs = []
    for _ in range(RUNS):
        try:
            run = subprocess.run([sys.executable, "-c", CHILD, kind, str(n)], cwd=root, env=env, capture_output=True,
                                 text=True, timeout=TIMEOUT_S, preexec_fn=_two_cpus, check=False)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{kind} of {n} impacts did not finish in {TIMEOUT_S} s (hang) after {len(runs)} good runs")
        assert run.returncode == 0, run.stderr[-4000:]
        runs.append(json.loads(run.stdout.strip().splitlines()[-1]))
    for key in ("compile", "run"):
        seconds = [r[key] for r in runs]
        print(f"\n{kind} of {n} impacts, {RUNS} fresh processes on 2 CPUs: {key} {min(seconds):.2f}–"
              f"{max(seconds):.2f} s (median {np.median(seconds):.2f} s)", end="")
    # Every run computes the same thing, and a member of the batch equals the same impact alone.
    assert len({(r["ok"], r["sum"]) for r in runs}) == 1
    assert runs[0]["ok"] >= 0.99 * n  # one consistent active set (almost) everywhere in this range
    np.testing.assert_allclose(runs[0]["member"], runs[0]["member_alone"], rtol=1e-12)
