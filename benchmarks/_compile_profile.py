"""Where a process's time goes in JAX's compile pipeline: tracing Python to a jaxpr, lowering the jaxpr to
StableHLO, and XLA's compile (or a read from the persistent compilation cache), from JAX's monitoring time spans.
A span inside another is counted once, for the later stage (a jitted function traced inside another's trace
counts once as tracing; a compile started while tracing counts as compiling).

A child process records when ``DIFIMPACT_COMPILE_PROFILE`` names a folder and it imports this module (``python
-c "import _compile_profile; ..."``, or ``pytest -p _compile_profile``, which loads it in every pytest-xdist worker
too) with ``benchmarks/`` on its path; it writes ``FOLDER/<pid>.json`` at exit. :func:`collect` sums a folder.
Processes that a recorded process starts (the float32 runs of `tests/test_precision.py`, say) are not recorded.
"""

import atexit
import glob
import json
import os

from jax import monitoring

ENV = "DIFIMPACT_COMPILE_PROFILE"
STAGES = {  # JAX's event: the stage, in pipeline order
    "/jax/core/compile/jaxpr_trace_duration": "tracing",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lowering",
    "/jax/core/compile/backend_compile_duration": "XLA compile",
}
_spans: dict[str, list[tuple[float, float]]] = {stage: [] for stage in STAGES.values()}
_written = False


def _listener(event, start_time, end_time, **kwargs):
    if event in STAGES:
        _spans[STAGES[event]].append((start_time, end_time))


def _union(spans):
    merged = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def _length(spans) -> float:
    return sum(end - start for start, end in _union(spans))


def _outside(spans, covered) -> float:
    """Length of the union of `spans` outside the union of `covered`: ``|S ∪ C| − |C|``."""
    return _length(list(spans) + list(covered)) - _length(covered)


def totals() -> dict[str, float]:
    """Seconds of each stage in this process so far, each span counted once (for its latest stage)."""
    order = list(STAGES.values())
    return {stage: _outside(_spans[stage], [s for later in order[i + 1:] for s in _spans[later]])
            for i, stage in enumerate(order)}


def _write():
    global _written
    folder = os.environ.get(ENV)
    if folder and not _written:
        _written = True
        with open(os.path.join(folder, f"{os.getpid()}.json"), "w") as f:
            json.dump(totals(), f)


def collect(folder) -> tuple[dict[str, float], int]:
    """The stages' seconds summed over the processes that wrote to `folder`, and how many did."""
    files = glob.glob(os.path.join(folder, "*.json"))
    out = dict.fromkeys(STAGES.values(), 0.0)
    for path in files:
        with open(path) as f:
            for stage, seconds in json.load(f).items():
                out[stage] += seconds
    return out, len(files)


def summary(stages: dict[str, float]) -> str:
    return ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in stages.items())


def pytest_unconfigure(config):  # a pytest process writes when it ends its session, not only at exit
    _write()


if os.environ.get(ENV):
    monitoring.register_event_time_span_listener(_listener)
    atexit.register(_write)
