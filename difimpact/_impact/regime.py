"""The regimes of a frictional single-point impact (Font-Llagunes et al. 2012, Table 2) as an enumeration."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Bool, Int


class FrictionalRegime(eqx.Enumeration):
    """The regime of a frictional single-point impact (Font-Llagunes et al. 2012, Table 2): the `regime` of a
    :class:`~difimpact.FrictionalImpactSolution`. Each item's message is the paper's name of the regime.

    - `stick`: the contact point is at rest tangentially at the start and stays there (``μ ≥ μ_c``);
    - `slide`: it slides throughout, in one direction;
    - `slide_reversal`: it slides, stops and slides back (``μ < μ_c``);
    - `slide_stick`: it slides, stops and then sticks (``μ ≥ μ_c``);
    - `slide_from_rest`: at rest at the start, it slides (``μ < μ_c``).

    Compare items as any enumeration's, under ``jit`` and ``vmap`` too:
    ``res.regime == di.FrictionalRegime.slide_stick``.
    """

    stick = "stick"
    slide = "slide"
    slide_reversal = "slide-reversal"
    slide_stick = "slide-stick"
    slide_from_rest = "slide-from-rest"


RegimeName = str | np.ndarray  # one name, or an array of them for a batched regime
_ITEMS = ("stick", "slide", "slide_reversal", "slide_stick", "slide_from_rest")
NAMES: tuple[str, ...] = tuple(name.replace("_", "-") for name in _ITEMS)  # the paper's names, in code order


def regime(rest: Bool[Array, ""], can_stick: Bool[Array, ""], two_phase: Bool[Array, ""]) -> FrictionalRegime:
    """The regime of Table 2 (Font-Llagunes et al. 2012) from the state at the start and whether ``v_t`` reaches
    zero."""
    R = FrictionalRegime
    return R.where(rest, R.where(can_stick, R.stick, R.slide_from_rest),
                   R.where(two_phase, R.where(can_stick, R.slide_stick, R.slide_reversal), R.slide))


def code(item: FrictionalRegime) -> Int[Array, "..."]:
    """The integer code of `item` (its index in :data:`NAMES`), under ``jit`` and with batch axes."""
    return jnp.select([item == getattr(FrictionalRegime, name) for name in _ITEMS], jnp.arange(len(_ITEMS)))


def names(item: FrictionalRegime) -> RegimeName:
    """The paper's name of `item`: a string, or an array of them for an item with batch axes."""
    out = np.asarray(NAMES)[np.asarray(code(item))]
    return str(out) if out.ndim == 0 else out
