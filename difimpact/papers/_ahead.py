"""Programs compiled ahead on a second core, for an experiment that solves a chain of problems one after another
(each mesh warm-started from the last), whose time is mostly XLA compiling one program per problem.

XLA compiles one program at a time in a process (two threads compile one after the other), so the programs are
shared out between this process and a helper process that it starts: both take the next program of the chain
not yet taken, and the helper's compiled programs reach this process through JAX's persistent compilation cache
and difimpact's program store (:func:`~difimpact.use_compilation_cache`), which it must have switched on (else,
or on one core, there is no helper and every program is compiled where it is first used). This process, needing
a program the helper is still compiling, compiles the next one not yet taken meanwhile. A helper that dies
leaves its programs to this process. The results are this process's own: the helper's calls are discarded.
"""

import multiprocessing
import os
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Self

import jax

from difimpact._exported import folder as store_folder

_POLL = 0.1  # seconds between looks at the helper's progress


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_FREE, _HELPER, _HERE = 0, 1, 2  # who took a task: nobody yet, the helper, this process (or skipped past)


def _next_free(state) -> int | None:
    return next((i for i in range(len(state)) if state[i] == _FREE), None)


def exit_with_parent(parent: int, before: Callable[[], object] = lambda: None) -> None:
    """End this process, after `before()`, once its parent `parent` is gone (killed, or ended without ending its
    children): the work it does (an experiment, a program compiled ahead) is for a process that no longer
    exists. A daemon thread looks every second."""
    import threading

    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        before()
        os._exit(1)

    threading.Thread(target=watch, name="difimpact-watch-parent", daemon=True).start()


def _helper(tasks, compile_one, lock, state, done, settings, parent) -> None:
    """The helper process: this process's settings, then the first task not taken, until none is left; it ends
    itself if `parent` (the process it compiles for) is gone."""
    exit_with_parent(parent)
    folder, programs, config = settings
    for name, value in config.items():
        jax.config.update(name, value)
    from difimpact import use_compilation_cache

    use_compilation_cache(folder, programs=programs)
    while True:
        with lock:
            i = _next_free(state)
            if i is None:
                return
            state[i] = _HELPER
        compile_one(tasks[i])
        done[i] = 1


class Ahead:
    """Compile `tasks` (in the order they will be needed) with `compile_one(task)` (a module-level function, run
    in either process; it compiles the task's program, e.g. by a call limited to one iteration), half of them in
    a helper process. Use as a context manager; :meth:`ready` before using a task's program."""

    def __init__(self, tasks: Sequence[Hashable], compile_one: Callable[[Hashable], object]):
        self.tasks, self.compile_one = list(tasks), compile_one
        self.process = None

    def __enter__(self) -> Self:
        folder = jax.config.jax_compilation_cache_dir
        stored = folder and jax.config.jax_enable_compilation_cache and store_folder() is not None
        if not (stored and _cores() > 1 and self.tasks):
            return self
        ctx = multiprocessing.get_context("spawn")
        self.lock = ctx.Lock()
        self.state, self.done = (ctx.Array("b", len(self.tasks), lock=False) for _ in range(2))
        config = {name: getattr(jax.config, name) for name in (
            "jax_enable_x64", "jax_include_full_tracebacks_in_locations", "jax_traceback_in_locations_limit")}
        settings = (folder, True, config)
        self.process = ctx.Process(target=_helper, args=(self.tasks, self.compile_one, self.lock, self.state,
                                                         self.done, settings, os.getpid()), daemon=True)
        self.process.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.process is not None:
            self.process.terminate()  # a program nobody will use
            self.process.join()
            self.process = None

    def ready(self, task: Hashable) -> None:
        """Return once `task`'s program is compiled by the helper, or at once where this process is to compile it
        (not taken by the helper: taken here now, and the tasks before it not taken are skipped; not a task; no
        helper, or a dead one); while the helper compiles it, compile here the first task nobody took."""
        if self.process is None or task not in self.tasks:
            return
        i = self.tasks.index(task)
        with self.lock:
            if self.state[i] != _HELPER:
                for k in range(i + 1):
                    self.state[k] = self.state[k] or _HERE
                return
        while not self.done[i] and self.process.is_alive():
            with self.lock:
                j = _next_free(self.state)
                if j is not None:
                    self.state[j] = _HERE
            if j is None:
                time.sleep(_POLL)
            else:
                self.compile_one(self.tasks[j])
