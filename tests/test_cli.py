"""The `difimpact` command's own interface: version, help, the experiment list."""

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

import _difimpact_cli
import difimpact
from _difimpact_cli import main
from difimpact.papers import catalogue
from difimpact.papers.registry import REGISTRY


def _run(argv, columns=None):
    out = io.StringIO()
    old = os.environ.get("COLUMNS")
    if columns:
        os.environ["COLUMNS"] = str(columns)
    try:
        with contextlib.redirect_stdout(out):
            try:
                code = main(argv)
            except SystemExit as stop:
                code = stop.code
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return code, out.getvalue()


def test_version():
    assert _run(["--version"]) == (0, f"difimpact {difimpact.__version__}\n")


@pytest.mark.parametrize("argv", [["--help"], ["reproduce", "--help"], ["list", "--help"]])
def test_help_is_plain_text(argv):
    code, text = _run(argv)
    assert code == 0 and "``" not in text and ":class:" not in text
    if "reproduce" in argv:
        assert "NAME" in text and "difimpact list" in text and "DIR" in text


def test_list_fits_the_terminal_and_names_the_papers():
    code, text = _run(["list"], columns=50)
    assert code == 0 and max(len(line) for line in text.splitlines()) <= 50
    code, text = _run(["list"], columns=80)
    lines = text.splitlines()
    assert code == 0 and max(len(line) for line in lines) <= 80
    for exp in REGISTRY.values():
        line = next(line for line in lines if line.startswith(exp.name + " "))
        assert exp.reference.short() in line and exp.target[:6] in line
    for seed, title in (("000", "swing-through crutch gait"), ("003", "bipedal")):
        assert any(title in line for line in lines), seed


def test_xla_flags_add_to_the_users(monkeypatch):
    """`add_xla_flags` appends the flags the user's XLA_FLAGS does not name (theirs win), and only on the jaxlib
    versions where they were measured (XLA aborts on a flag it does not know)."""
    from importlib.metadata import version

    from difimpact import _cli

    ours = ("--xla_cpu_use_fusion_emitters=false", "--xla_backend_optimization_level=0")
    monkeypatch.setattr(_cli, "_MEASURED_JAXLIB", (tuple(int(v) for v in version("jaxlib").split(".")[:2]),))
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_use_fusion_emitters=true --xla_force_host_platform_device_count=2")
    _cli.add_xla_flags(ours)
    assert os.environ["XLA_FLAGS"].split() == ["--xla_cpu_use_fusion_emitters=true",
                                               "--xla_force_host_platform_device_count=2",
                                               "--xla_backend_optimization_level=0"]
    monkeypatch.setattr(_cli, "_MEASURED_JAXLIB", ((0, 0),))
    monkeypatch.delenv("XLA_FLAGS")
    _cli.add_xla_flags(ours)
    assert "XLA_FLAGS" not in os.environ


def test_xla_flags_come_before_jax_starts():
    """XLA reads its flags once, when JAX starts its CPU client: `reproduce` adds them before anything starts it
    (importing the experiments does). A fresh process, as the console script is; a flag that XLA shows (the
    number of CPU devices) stands for the command's, and the run stops once the experiments are imported."""
    code = ("import os, sys\n"
            "import _difimpact_cli\n"
            "from difimpact import _cli\n"
            "def flags(ours):\n"
            "    os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=3'\n"
            "def reproduce(*args):\n"
            "    import jax\n"
            "    print('DEVICES', jax.device_count(), 'difimpact.papers.registry' in sys.modules)\n"
            "    return 0\n"
            "_cli.add_xla_flags, _cli.reproduce = flags, reproduce\n"
            "_difimpact_cli.main(['reproduce', 'crutch-grid', '--no-cache'])\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DIFIMPACT_XLA_DEFAULTS", "XLA_FLAGS")}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "DEVICES 3 True" in run.stdout, run.stderr[-3000:]


def test_help_version_and_list_do_not_import_jax():
    """``--help``, ``--version`` and ``list`` answer from the catalogue, without importing the library (and JAX)."""
    code = ("import contextlib, io, sys\n"
            "import _difimpact_cli\n"
            "for argv in (['--help'], ['--version'], ['list'], ['list', '-v'], ['reproduce', '--help']):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        try:\n"
            "            _difimpact_cli.main(argv)\n"
            "        except SystemExit:\n"
            "            pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'difimpact', 'numpy')))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    stale = "catalogue.json out of date? `python -m difimpact.papers.catalogue` writes it again"
    assert run.returncode == 0 and run.stdout.strip() == "[]", (stale, run.stdout, run.stderr[-3000:])


def test_catalogue_is_the_registry_s():
    """``catalogue.json`` holds what the registry holds and the hash of the sources it was written from."""
    stored = json.loads(catalogue.PATH.read_text(encoding="utf-8"))
    fresh = "run `python -m difimpact.papers.catalogue` to write it again"
    assert stored["experiments"] == catalogue.entries(), fresh
    assert stored["fingerprint"] == _difimpact_cli.fingerprint(catalogue.PATH.parent), fresh
    assert _difimpact_cli.catalogue() == catalogue.entries()


def test_a_stale_catalogue_gives_way_to_the_registry(monkeypatch):
    monkeypatch.setattr(_difimpact_cli, "fingerprint", lambda folder: "edited since")
    assert _difimpact_cli.catalogue() == catalogue.entries()


def test_help_names_papers_not_seeds():
    for argv in (["--help"], ["reproduce", "--help"], ["list", "--help"]):
        code, text = _run(argv)
        assert code == 0 and "seed 00" not in text.lower(), (argv, text)


def test_out_that_is_a_file_or_not_writable_is_refused_plainly(tmp_path, monkeypatch, capsys):
    """``--out`` naming a file, or a folder that cannot be written, ends in the parser's message and exit
    status 2, before any experiment runs (no traceback)."""
    from difimpact import _cli

    afile = tmp_path / "a-file"
    afile.write_text("")
    code, _ = _run(["reproduce", "crutch-grid", "--quick", "--no-cache", "--out", str(afile)])
    assert code == 2 and "exists and is not a folder" in capsys.readouterr().err
    monkeypatch.setattr(_cli.os, "access", lambda path, mode: False)  # root may write anywhere: simulate
    code, _ = _run(["reproduce", "crutch-grid", "--quick", "--no-cache", "--out", str(tmp_path / "ro")])
    assert code == 2 and "not writable" in capsys.readouterr().err
