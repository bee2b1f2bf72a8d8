"""`use_compilation_cache`: the switch sets JAX's persistent compilation cache to its folder (by default the
user's cache folder, named with the library's version), refuses a bad path, and a program compiled in one process
is loaded by the next (JAX's cache hit, not a timing)."""

import json
import os
import subprocess
import sys

import jax
import pytest

import difimpact as di
from difimpact._cache import _default_folder


@pytest.fixture
def restore_cache():
    """The test suite's own cache folder and settings, put back after a test that moves them."""
    folder = jax.config.jax_compilation_cache_dir
    yield
    di.use_compilation_cache(folder)


def test_switch_sets_the_config(tmp_path, restore_cache):
    folder = tmp_path / "a" / "b"
    assert di.use_compilation_cache(folder) == folder and folder.is_dir()
    assert jax.config.jax_compilation_cache_dir == str(folder)
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 0.0
    assert jax.config.jax_persistent_cache_min_entry_size_bytes == -1
    assert di.use_compilation_cache() == folder  # no path: the folder JAX already uses
    assert di.use_compilation_cache(str(tmp_path)) == tmp_path  # a str as a path


def test_default_folder_names_the_version(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = _default_folder()
    assert folder.name == di.__version__ and folder.parent.parts[-2:] == ("difimpact", "jax")
    if sys.platform not in ("darwin", "win32"):
        assert folder == tmp_path / "difimpact" / "jax" / di.__version__


@pytest.mark.parametrize("path", [3, b"/tmp/x", ["folder"]])
def test_not_a_path(path):
    before = jax.config.jax_compilation_cache_dir
    with pytest.raises(TypeError, match="`path` must be a folder"):
        di.use_compilation_cache(path)
    assert jax.config.jax_compilation_cache_dir == before


def test_folder_that_cannot_be_made(tmp_path):
    before = jax.config.jax_compilation_cache_dir
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="cannot create the cache folder .*file"):
        di.use_compilation_cache(tmp_path / "file" / "cache")
    with pytest.raises(ValueError, match="`path` is empty"):
        di.use_compilation_cache("")
    assert jax.config.jax_compilation_cache_dir == before


# A contact law's force: a library function whose program holds no host callback (most entry points check their
# input with `equinox.error_if`, which JAX does not store); a program with such a check beside it.
SCRIPT = """
import json
import equinox as eqx, jax, jax.numpy as jnp
import difimpact as di
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event))
folder = di.use_compilation_cache()
law = di.HuntCrossley(2.0e5, 0.3)

@jax.jit
def hunt_crossley_force(law, delta, delta_dot):
    return law.force(delta, delta_dot)

@jax.jit
def checked(x):
    return 2 * eqx.error_if(x, x < 0, "`x` must be non-negative") + 1

before = hits.count("/jax/compilation_cache/cache_hits")
force = float(hunt_crossley_force(law, 1e-3, 0.5))
force_hits = hits.count("/jax/compilation_cache/cache_hits") - before
try:
    checked(-1.0).block_until_ready()
    message = None
except Exception as err:
    message = "`x` must be non-negative" in str(err)
print(json.dumps(dict(folder=str(folder), force=force, force_hits=force_hits, checked=float(checked(1.0)),
                      message=message)))
"""


def test_second_process_loads_the_program(tmp_path, monkeypatch):
    """The acceptance test: a first process stores the program, a second finds it (a cache hit) and stores
    nothing new for it; the program with a host callback is stored by neither and works in both."""
    for home in ("XDG_CACHE_HOME", "HOME", "LOCALAPPDATA"):  # the default folder, in `tmp_path` on every system
        monkeypatch.setenv(home, str(tmp_path))
    env = {k: v for k, v in os.environ.items() if not k.startswith((
        "JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "JAX_ENABLE_COMPILATION_CACHE"))}

    def run():
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.splitlines()[-1])

    first = run()
    folder = _default_folder()
    assert folder.is_relative_to(tmp_path)
    assert first["folder"] == str(folder)
    stored = sorted(p.name for p in folder.glob("jit_hunt_crossley_force-*"))
    assert len(stored) == 1, sorted(p.name for p in folder.iterdir())
    second = run()
    assert (first["force_hits"], second["force_hits"]) == (0, 1)
    assert sorted(p.name for p in folder.glob("jit_hunt_crossley_force-*")) == stored
    assert first["force"] == second["force"] > 0
    assert not list(folder.glob("jit_checked-*"))
    for done in (first, second):
        assert done["checked"] == 3.0 and done["message"] is True
