"""The outcomes of difimpact's entry points: one enumeration hierarchy extending optimistix's."""

import optimistix as optx


class RESULTS(optx.RESULTS):  # pyright: ignore
    """Outcomes shared by every difimpact entry point (those of optimistix, whose root finds the solvers
    use). Each entry point extends it with its own failures (:class:`~difimpact.ImpactResults`, …), whose
    items can be compared with these after ``promote``."""
