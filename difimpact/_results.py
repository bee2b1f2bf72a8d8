"""The outcomes of difimpact's entry points: one enumeration hierarchy extending optimistix's."""

import warnings

import equinox as eqx
import optimistix as optx


class RESULTS(optx.RESULTS):  # pyright: ignore
    """Outcomes shared by every difimpact entry point (those of optimistix, whose root finds the solvers
    use). Each entry point extends it with its own failures (:class:`~difimpact.ImpactResults`, …), whose
    items can be compared with these after ``promote``. Non-finite values (NaN or inf from finite input) are
    optimistix's one item ``nonfinite``, whichever entry point meets them."""


class _DeprecatedItem:
    """A class attribute naming an item of an enumeration by a former name: it gives the item of the class it is
    read from (a subclass included) and warns."""

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def __get__(self, instance, owner):
        warnings.warn(f"`{owner.__name__}.{self.old}` is deprecated: use `{owner.__name__}.{self.new}`.",
                      DeprecationWarning, stacklevel=2)
        return getattr(owner, self.new)


def deprecated_items(cls, **aliases: str):
    """Let ``cls.old`` name the item ``cls.new`` for each ``old=new`` in `aliases`, with a ``DeprecationWarning``.
    Set after the class is made: a name in the class body would be a new item."""
    for old, new in aliases.items():
        getattr(cls, new)  # an existing item
        setattr(cls, old, _DeprecatedItem(old, new))
    return cls


def error_if_failed(x, result, results: type[RESULTS], nonfinite: str):
    """Raise on a failed `result` (an item of `results`) inside ``jit``: ``nonfinite`` with the entry point's own
    reason `nonfinite` (what overflowed, and why), any other failure with its item's message. Returns `x`."""
    x = eqx.error_if(x, result == results.nonfinite, nonfinite)
    return result.error_if(x, result != results.successful)
