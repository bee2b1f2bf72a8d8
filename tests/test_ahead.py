"""`difimpact.papers._ahead.Ahead`: the programs of a chain of solves shared out between the process and a helper
process. Tasks here write a file named for the task and the process that ran it (no JAX work), so that who did
what is read from the folder: every task done exactly once, some by the helper, and a helper that dies leaves
its task to the process."""

import os
import pathlib
import time

import jax
import pytest

from difimpact import _exported
from difimpact.papers import _ahead

SECONDS = 1.0  # a task's "compile"


def compile_one(task):
    folder, name = task
    time.sleep(SECONDS)
    (pathlib.Path(folder) / f"{name}.{os.getpid()}").touch()


@pytest.fixture
def stored(tmp_path, monkeypatch):
    """The compilation cache and the program store on, in `tmp_path` (as `difimpact reproduce` has them; no
    program is compiled here), and two cores."""
    monkeypatch.setattr(_exported, "_folder", tmp_path / "exported")
    monkeypatch.setattr(_ahead, "_cores", lambda: 2)
    before = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", str(tmp_path / "cache"))
    yield tmp_path
    jax.config.update("jax_compilation_cache_dir", before)


def _wait_taken(ahead, deadline=120.0):
    start = time.monotonic()
    while not any(ahead.state[i] == _ahead._HELPER for i in range(len(ahead.tasks))):
        assert time.monotonic() - start < deadline, "the helper took no task"
        assert ahead.process.is_alive(), "the helper died"
        time.sleep(0.05)


def test_every_task_once_some_by_the_helper(stored):
    work = stored / "work"
    work.mkdir()
    tasks = [(str(work), f"t{i}") for i in range(5)]
    with _ahead.Ahead(tasks, compile_one) as ahead:
        assert ahead.process is not None
        _wait_taken(ahead)
        for task in tasks:
            ahead.ready(task)
            if not list(work.glob(f"{task[1]}.*")):  # not compiled by either: where it is first used
                compile_one(task)
    done = sorted(p.name for p in work.iterdir())
    assert sorted(name.partition(".")[0] for name in done) == [name for _, name in tasks]
    assert {name.partition(".")[2] for name in done} > {str(os.getpid())}  # this process and the helper


def test_a_dead_helper_leaves_its_task(stored):
    work = stored / "work"
    work.mkdir()
    tasks = [(str(work), f"t{i}") for i in range(3)]
    with _ahead.Ahead(tasks, compile_one) as ahead:
        _wait_taken(ahead)
        taken = next(t for i, t in enumerate(tasks) if ahead.state[i] == _ahead._HELPER)
        ahead.process.kill()
        ahead.process.join()
        start = time.monotonic()
        ahead.ready(taken)
        assert time.monotonic() - start < 10 * SECONDS


def test_without_the_store_no_helper(tmp_path, monkeypatch):
    monkeypatch.setattr(_exported, "_folder", None)
    with _ahead.Ahead([(str(tmp_path), "t0")], compile_one) as ahead:
        assert ahead.process is None
        ahead.ready((str(tmp_path), "t0"))  # at once
    assert not list(tmp_path.iterdir())
