"""The outcomes of difimpact's entry points: one enumeration hierarchy extending optimistix's."""

import equinox as eqx
import optimistix as optx


class RESULTS(optx.RESULTS):  # pyright: ignore
    """Outcomes shared by every difimpact entry point (those of optimistix, whose root finds the solvers
    use). Each entry point extends it with its own failures (:class:`~difimpact.ImpactResults`, …), whose
    items can be compared with these after ``promote``. Non-finite values (NaN or inf from finite input) are
    optimistix's one item ``nonfinite``, whichever entry point meets them."""


def error_if_failed(x, result, results: type[RESULTS], nonfinite: str):
    """Raise on a failed `result` (an item of `results`) inside ``jit``: ``nonfinite`` with the entry point's own
    reason `nonfinite` (what overflowed, and why), any other failure with its item's message. Returns `x`."""
    x = eqx.error_if(x, result == results.nonfinite, nonfinite)
    return result.error_if(x, result != results.successful)
