"""The same command gives bit-identical outputs twice on the same machine (issue 8, item 4).

``difimpact reproduce crutch-critical-friction biped-torso --quick`` runs twice, each in a fresh process, the
second with the programs the first stored in the persistent compilation cache; CSVs and figures must be
byte-identical, and ``report.md`` and each ``result.json`` too apart from their wall-clock times
(``_N rows, T s._``, ``"seconds"``).
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import difimpact

COMMAND = ["-m", "_difimpact_cli", "reproduce", "crutch-critical-friction", "biped-torso", "--quick", "--quiet"]
TIMING = re.compile(r"^_\d+ rows, [0-9.]+ s\._$", re.MULTILINE)


def _env(cache_home: pathlib.Path, **extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_COMPILATION_CACHE_DIR", "DIFIMPACT_NO_COMPILE_CACHE")}
    return dict(env, XDG_CACHE_HOME=str(cache_home), **extra)


def _run(out: pathlib.Path) -> dict[str, bytes]:
    env = _env(out.parent / "cache")
    subprocess.run([sys.executable, *COMMAND, "--out", str(out)], check=True, capture_output=True, timeout=600,
                   env=env)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_reproduce_twice_bit_identical(tmp_path):
    first, second = _run(tmp_path / "a"), _run(tmp_path / "b")
    assert first.keys() == second.keys()
    csvs = [k for k in first if k.endswith(".csv")]
    assert len(csvs) == 2 and all(first[k] for k in csvs)
    for name in first:
        if name == "report.md":
            a, b = (TIMING.sub("", d[name].decode()) for d in (first, second))
            assert TIMING.search(first[name].decode())  # the stripped lines exist
            assert a == b
        elif name.endswith("result.json"):
            a, b = (json.loads(d[name]) for d in (first, second))
            assert a.pop("seconds") >= 0 and b.pop("seconds") >= 0
            assert a == b, name
        else:
            assert first[name] == second[name], name


CACHED = """
import json, sys
import equinox as eqx, jax, jax.numpy as jnp
from difimpact._cli import _enable_compile_cache
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event))
folder = _enable_compile_cache()
f = jax.jit(lambda x: 2 * eqx.error_if(x, x < 0, "`x` must be non-negative") + 1)
g = jax.jit(lambda x: 3 * x - 1)
g(1.0).block_until_ready()
try:
    f(-1.0).block_until_ready()
    message = None
except Exception as err:
    message = "`x` must be non-negative" in str(err)
print(json.dumps(dict(folder=str(folder), value=float(f(1.0)), message=message,
                      hits=hits.count("/jax/compilation_cache/cache_hits"))))
"""


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the cache folder is elsewhere there")
def test_compile_cache_in_user_folder(tmp_path, monkeypatch):
    """The CLI's persistent compilation cache lives in ``$XDG_CACHE_HOME/difimpact/jax``; a program compiled in
    one process is loaded by the next (a cache hit); one with a run-time check (a host callback, which JAX does
    not store) gives the same value and raises its own message in both. ``DIFIMPACT_NO_COMPILE_CACHE=1`` turns
    the cache off."""
    folder = tmp_path / "difimpact" / "jax" / difimpact.__version__
    runs = [json.loads(subprocess.run([sys.executable, "-c", CACHED], env=_env(tmp_path), check=True,
                                      capture_output=True, text=True, timeout=300).stdout.splitlines()[-1])
            for _ in range(2)]
    for run in runs:
        assert run["folder"] == str(folder) and run["value"] == 3.0 and run["message"] is True
    assert runs[0]["hits"] == 0 and runs[1]["hits"] >= 1
    assert any(folder.glob("jit__lambda-*-cache")), list(folder.iterdir())

    from difimpact._cli import _enable_compile_cache

    monkeypatch.setenv("DIFIMPACT_NO_COMPILE_CACHE", "1")
    assert _enable_compile_cache() is None
