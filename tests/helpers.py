"""Shared test utilities: tree comparison, central finite differences, running an example notebook, solving an
experiment's optima once per module."""

import contextlib
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def tree_allclose(x, y, *, rtol=1e-10, atol=1e-12):
    xs, ys = jax.tree_util.tree_leaves(x), jax.tree_util.tree_leaves(y)
    return len(xs) == len(ys) and all(
        np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol) for a, b in zip(xs, ys)
    )


def central_difference(f, x, h=None):
    """Central finite-difference derivative of scalar-or-array ``f`` at array ``x`` (float64).

    Returns an array of shape ``f(x).shape + x.shape``. Step ``h`` defaults to ``eps**(1/3) * max(1, |x|)``.
    """
    x = np.asarray(x, dtype=np.float64)
    f0 = np.asarray(f(jnp.asarray(x)))
    out = np.zeros(f0.shape + x.shape)
    for idx in np.ndindex(x.shape):
        step = h if h is not None else np.finfo(float).eps ** (1 / 3) * max(1.0, abs(x[idx]))
        xp, xm = x.copy(), x.copy()
        xp[idx] += step
        xm[idx] -= step
        out[(...,) + idx] = (np.asarray(f(jnp.asarray(xp))) - np.asarray(f(jnp.asarray(xm)))) / (2 * step)
    return out


def reproduce_quick(out, *names) -> dict:
    """Run ``difimpact reproduce NAMES --quick --json --no-cache --jobs 1`` into folder ``out``; return
    ``{name: rows}`` from the JSON lines printed on standard output. Without the persistent compilation cache,
    which would otherwise be switched on for the rest of the test process, in the user's cache folder."""
    import contextlib
    import io
    import json

    from _difimpact_cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["reproduce", *names, "--quick", "--out", str(out), "--json", "--quiet", "--no-cache",
                     "--jobs", "1"]) == 0  # in this process: its settings, and what the tests patch
    lines = [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]
    return {d["experiment"]: d["rows"] for d in lines}


@contextlib.contextmanager
def solved_once(module, name: str, key):
    """While the context lasts, ``module.<name>`` (an experiment's solve) returns the result it gave before for
    the same ``key(*args)`` (``None``: not remembered): ``difimpact reproduce --quick`` then takes the optima that
    the tests' fixtures solved rather than solving them again (several seconds each at the tests' XLA settings),
    and the rows it writes are those of the solutions the tests check."""
    solve, seen = getattr(module, name), {}

    def remembered(*args):
        k = key(*args)
        if k is None:
            return solve(*args)
        if k not in seen:
            seen[k] = solve(*args)
        return seen[k]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, name, remembered)
        yield


def simplest_walker_stride(x, slope, tol=1e-12):
    """Garcia et al.'s simplest walker, written independently with ``scipy.integrate.solve_ivp`` (DOP853):
    ``q̈3 = sin(q3 + γ)``, ``s̈ = −sin(s − γ) − q̈3 cos q4 + q̇3² sin q4`` (``s = q4 − q3``) from ``x = (q3, q̇3,
    q̇4)`` at ``q4 = 2 q3``; heel strike where ``q4 − 2 q3`` falls through zero with the swing foot ahead
    (``q4 > 0``; the passage through the ground near mid-stance, where it rises through zero, is ignored), then
    ``q̇3⁺ = q̇3⁻ cos 2a``, ``q̇4⁺ = q̇3⁺ (1 − cos 2a)`` and the leg swap. Returns ``(P(x), step time)``."""
    import math

    import numpy as np
    from scipy.integrate import solve_ivp

    def rhs(t, y):
        q3, q4, u3, u4 = y
        a3 = math.sin(q3 + slope)
        return [u3, u4, a3, -math.sin(q4 - q3 - slope) - a3 * math.cos(q4) + u3 * u3 * math.sin(q4) + a3]

    def strike(t, y):
        return y[1] - 2 * y[0]

    strike.direction = -1
    sol = solve_ivp(rhs, (0.0, 8.0), [x[0], 2 * x[0], x[1], x[2]], method="DOP853", rtol=tol, atol=tol,
                    events=strike)
    t, y = next((t, y) for t, y in zip(sol.t_events[0], sol.y_events[0]) if y[1] > 0)
    c = math.cos(2 * y[0])
    return np.array([-y[0], y[2] * c, y[2] * c * (1 - c)]), t


def simplest_walker_gait(x0, slope):
    """Fixed point of :func:`simplest_walker_stride` by ``scipy.optimize.fsolve``, and the finite-difference
    Jacobian of the stride map there (central, step 1e-6)."""
    import numpy as np
    from scipy.optimize import fsolve

    x = fsolve(lambda x: simplest_walker_stride(x, slope)[0] - x, x0, xtol=1e-11)
    cols = [(simplest_walker_stride(x + 1e-6 * e, slope)[0] - simplest_walker_stride(x - 1e-6 * e, slope)[0]) / 2e-6
            for e in np.eye(3)]
    return x, np.stack(cols, axis=1)


def run_notebook(name: str):
    """Execute ``notebooks/<name>.ipynb`` top to bottom in an IPython shell of this process, with a namespace of
    its own and the notebooks folder as the working directory, and re-raise the first error of a cell.

    In this process the notebook reuses the programs the tests compiled before it (JAX's in-memory caches; a
    kernel would trace and lower each again and take only the XLA compilation from the persistent cache).
    Float64 is off while it runs, as in a fresh kernel: the notebook enables it itself."""
    import os

    import matplotlib
    import matplotlib.pyplot as plt
    import nbformat
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    folder = Path(__file__).parent.parent / "notebooks"
    nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
    config = Config()
    config.HistoryManager.enabled = False  # no history database, no thread writing it
    shell = InteractiveShell(config=config)
    backend, x64, cwd = matplotlib.get_backend(), jax.config.jax_enable_x64, os.getcwd()
    matplotlib.use("Agg")
    jax.config.update("jax_enable_x64", False)
    os.chdir(folder)
    try:
        for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
            result = shell.run_cell(cell.source, silent=True, store_history=False)
            if not result.success:
                raise AssertionError(f"{name}.ipynb, code cell {i + 1} raised") from (
                    result.error_before_exec or result.error_in_exec)
    finally:
        os.chdir(cwd)
        jax.config.update("jax_enable_x64", x64)
        plt.close("all")
        matplotlib.use(backend)
