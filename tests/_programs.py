"""What a lowered program holds: its host callbacks (``equinox.error_if``, ``jax.debug.print``), which keep JAX's
persistent compilation cache from storing it."""

import re


def host_callbacks(text: str) -> int:
    """The number of host-callback custom calls in a lowered program's text (``jax.jit(f).lower(...).as_text()``)."""
    targets = re.findall(r'custom_call @(\w+)|call_target_name = "(\w+)"', text)
    return sum("callback" in (a or b) for a, b in targets)
