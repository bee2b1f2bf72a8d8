"""Shared test utilities: tree comparison and central finite differences."""

import jax
import jax.numpy as jnp
import numpy as np


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
    """Run ``difimpact reproduce NAMES --quick --json --no-cache`` into folder ``out``; return ``{name: rows}``
    from the JSON lines printed on standard output. Without the persistent compilation cache, which would
    otherwise be switched on for the rest of the test process, in the user's cache folder."""
    import contextlib
    import io
    import json

    from difimpact._cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["reproduce", *names, "--quick", "--out", str(out), "--json", "--quiet", "--no-cache"]) == 0
    lines = [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]
    return {d["experiment"]: d["rows"] for d in lines}
