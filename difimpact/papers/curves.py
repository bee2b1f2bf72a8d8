"""What the experiments read off sampled curves: monotonicity, the size of a gap as a share of what a figure
plots, flat CSV rows from columns, and the finiteness of what a program with the checks as NaN returned."""

from collections.abc import Mapping, Sequence

import numpy as np

from .experiment import Row


def monotone(a, increasing: bool = True, *, axis: int = -1, tol: float = 0.0) -> bool:
    """Strictly monotone along `axis` (steps against the direction up to `tol` allowed); steps next to a NaN
    sample (a masked or failed point) are ignored."""
    d = np.diff(np.asarray(a, float), axis=axis)
    d = d[np.isfinite(d)]
    return bool(np.all(d > -tol) if increasing else np.all(d < tol))


def plotted_range(*curves, floor: float = 0.0) -> float:
    """The extent of the y-axis that plots `curves` together (NaN ignored), at least `floor`."""
    values = np.concatenate([np.ravel(np.asarray(c, float)) for c in curves])
    return float(max(np.nanmax(values) - np.nanmin(values), floor))


def plotted_max(*curves) -> float:
    """The largest magnitude plotted (NaN ignored)."""
    return float(max(np.nanmax(np.abs(np.asarray(c, float))) for c in curves))


def table_rows(columns: Mapping[str, Sequence], keep=None) -> list[Row]:
    """Rows from equal-length `columns` (name → values, in column order): numbers as Python floats, strings
    kept; `keep` (booleans) selects rows."""
    arrays = {k: np.asarray(v) for k, v in columns.items()}
    n = len(next(iter(arrays.values())))
    chosen = range(n) if keep is None else np.flatnonzero(np.asarray(keep, bool))
    return [{k: (str(v[i]) if v.dtype.kind in "US" else float(v[i])) for k, v in arrays.items()} for i in chosen]


def require_finite(what: str, values: Mapping[str, object]) -> None:
    """Raise ``RuntimeError`` naming `what`, the quantity and the first point where one of `values` (name → array)
    is NaN or infinite: the papers' programs trace the library's checks as NaN (:func:`difimpact.checks_as_nan`, so
    that JAX's compilation cache keeps them), and a check that failed shows so."""
    for name, value in values.items():
        a = np.asarray(value)
        bad = np.flatnonzero(~np.isfinite(a)) if a.dtype.kind in "fc" else ()
        if len(bad):
            at = np.unravel_index(bad[0], a.shape) if a.ndim else ()
            raise RuntimeError(f"{what}: {name} is not finite at point {tuple(int(i) for i in at)} of "
                               f"{a.shape} (a check of the library failed there)")
