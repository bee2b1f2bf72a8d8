"""`difimpact reproduce`'s report is rebuilt from the files on disk: one section per experiment, quick or full
marked, and a run that was cut short says so. Fake experiments (no JAX work) keep this cheap; the real ones are
run by tests/test_reproduce_seed00*.py."""

import json
import re

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from _difimpact_cli import main  # noqa: E402
from difimpact.papers.experiment import Experiment, Outcome, check_that  # noqa: E402
from difimpact.papers.registry import REGISTRY  # noqa: E402


def _fake(name, fail=None):
    """An experiment whose rows and figure depend on `quick` (3 rows quick, 6 full); `fail` is raised instead."""

    def run(quick, progress):
        if fail is not None:
            raise fail
        n = 3 if quick else 6
        fig, ax = plt.subplots()
        ax.plot(range(n))
        return Outcome([{"x": i, "y": i * i} for i in range(n)], {"fig": fig}, [check_that("s", "p", "o", True)])

    return Experiment(name, "000", "Fig. 0", f"fake {name}", run)


@pytest.fixture
def fakes(monkeypatch):
    def register(*experiments):
        for e in experiments:
            monkeypatch.setitem(REGISTRY, e.name, e)
    return register


def _reproduce(out, *args):
    return main(["reproduce", *args, "--out", str(out), "--quiet", "--jobs", "1"])  # the fakes live here


def _sections(report):
    return re.findall(r"^## `([^`]+)` — .* · (quick|full)$", report, re.MULTILINE)


def _consistent(out, report):
    """Every linked figure exists, every experiment folder has one section, each CSV has the rows it says."""
    for link in re.findall(r"\]\(([^)]+\.png)\)", report):
        assert (out / link).is_file(), link
    folders = sorted(p.name for p in out.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert sorted(name for name, _ in _sections(report)) == folders
    for name in folders:
        result = json.loads((out / name / "result.json").read_text())
        rows = (out / name / f"{name}.csv").read_text().splitlines()
        assert len(rows) == result["rows"] + 1
        assert f"_{result['rows']} rows," in report


def test_rerun_one_experiment_replaces_its_section(tmp_path, fakes):
    fakes(_fake("fake-a"), _fake("fake-b"))
    assert _reproduce(tmp_path, "fake-a", "fake-b") == 0
    assert _sections((tmp_path / "report.md").read_text()) == [("fake-a", "full"), ("fake-b", "full")]
    assert _reproduce(tmp_path, "fake-a", "--quick") == 0
    report = (tmp_path / "report.md").read_text()
    assert _sections(report) == [("fake-a", "quick"), ("fake-b", "full")]  # one section each, marked
    assert "Quick run (`--quick`)" in report and "Written by run 2." in report and "Written by run 1." in report
    assert "Run 2 (`difimpact reproduce fake-a --quick`, quick) finished all 1 experiment(s)" in report
    _consistent(tmp_path, report)
    assert len((tmp_path / "fake-a" / "fake-a.csv").read_text().splitlines()) == 4  # the quick rows, not mixed


def test_interrupted_run_says_so(tmp_path, fakes):
    fakes(_fake("fake-a"), _fake("fake-b", KeyboardInterrupt()), _fake("fake-c"))
    with pytest.raises(KeyboardInterrupt):
        _reproduce(tmp_path, "fake-a", "fake-b", "fake-c")
    report = (tmp_path / "report.md").read_text()
    assert "**Run 1 (`difimpact reproduce fake-a fake-b fake-c`, full) was interrupted** (Ctrl-C or SIGTERM) during `fake-b`" \
        in report
    assert "did not finish: `fake-b`, `fake-c`." in report
    assert _sections(report) == [("fake-a", "full")]
    _consistent(tmp_path, report)
    assert not list(tmp_path.glob(".*partial"))


def test_failed_run_keeps_the_earlier_result_and_says_so(tmp_path, fakes):
    fakes(_fake("fake-a"))
    assert _reproduce(tmp_path, "fake-a") == 0
    fakes(_fake("fake-a", RuntimeError("solver diverged")))
    with pytest.raises(RuntimeError):
        _reproduce(tmp_path, "fake-a", "--quick")
    report = (tmp_path / "report.md").read_text()
    assert "**Run 2 (`difimpact reproduce fake-a --quick`, quick) failed** in `fake-a`: RuntimeError: solver " \
           "diverged" in report
    assert "earlier runs: `fake-a` (run 1, full)" in report
    assert _sections(report) == [("fake-a", "full")]
    _consistent(tmp_path, report)


@pytest.mark.slow  # two runs of real experiments, one in two worker processes: CI's second stage
@pytest.mark.stage2
def test_experiments_in_worker_processes(tmp_path):
    """``--jobs 2``: two real experiments, each run in a worker process of its own, leave the same rows as one
    after the other in this process, and a report that matches the files beside it."""
    names = ["crutch-table3", "heelstrike-torso"]  # two of the cheapest
    for jobs in ("2", "1"):
        out = tmp_path / jobs
        assert main(["reproduce", *names, "--quick", "--quiet", "--no-cache", "--out", str(out), "--jobs", jobs]) == 0
        report = (out / "report.md").read_text()
        assert sorted(_sections(report)) == [(n, "quick") for n in names]
        assert "finished all 2 experiment(s)" in report
        _consistent(out, report)
    for name in names:
        assert (tmp_path / "2" / name / f"{name}.csv").read_text() == \
            (tmp_path / "1" / name / f"{name}.csv").read_text()


def _children(pid):
    """The process ids whose parent is `pid` (Linux's /proc)."""
    import pathlib

    found = []
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid):
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    return state != "Z"


@pytest.mark.slow  # starts a command and its two workers: CI's second stage
@pytest.mark.stage2
@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGKILL"])
def test_stopped_command_takes_its_workers_along(tmp_path, signal_name):
    """A ``reproduce --jobs 2`` stopped by a signal leaves no worker running, nor the helper compiling ahead that
    ``gait-five-link``'s worker starts (with a compilation cache): ``SIGTERM`` stops it as Ctrl-C does (the report
    says interrupted, the workers are ended, their helper notices its worker gone), and after ``SIGKILL`` (no
    clean-up possible) the workers notice that their command is gone and end themselves and their helper."""
    import os
    import pathlib
    import signal
    import subprocess
    import sys
    import time

    if not pathlib.Path("/proc/self/stat").exists():
        pytest.skip("reads the process table from Linux's /proc")
    out = tmp_path / "out"
    command = [sys.executable, "-c", "import sys, _difimpact_cli; sys.exit(_difimpact_cli.main())", "reproduce",
               "gait-human-predicted", "gait-five-link", "--quick", "--quiet", "--jobs", "2", "--out", str(out)]
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))  # a cache of its own: the helper needs one
    parent = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    workers, helpers = [], []
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:  # both workers, and the helper of gait-five-link's worker
            workers = _children(parent.pid)
            helpers = [h for w in workers for h in _children(w)]
            if len(workers) >= 2 and helpers:
                break
            time.sleep(0.5)
        assert len(workers) >= 2 and helpers, f"no workers or helper started: {parent.poll()=}"
        time.sleep(10.0)  # the helper at work: compiling a program (a minute or more)
        assert all(_alive(w) for w in workers + helpers)
        parent.send_signal(getattr(signal, signal_name))
        _, err = parent.communicate(timeout=60)
        deadline = time.monotonic() + 20
        while any(_alive(w) for w in workers + helpers) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not [w for w in workers if _alive(w)], "a worker outlived its command"
        assert not [h for h in helpers if _alive(h)], "a helper compiling ahead outlived its worker"
    finally:
        if parent.poll() is None:
            parent.kill()
        for w in set(workers + helpers + _children(parent.pid)):  # those outliving a failed check too
            if _alive(w):
                os.kill(w, signal.SIGKILL)
    if signal_name == "SIGTERM":
        assert parent.returncode != 0
        assert "run interrupted" in err
        assert "interrupted" in (out / "report.md").read_text()
