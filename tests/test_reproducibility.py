"""The same command gives bit-identical outputs twice on the same machine (issue 8, item 4).

``difimpact reproduce crutch-critical-friction biped-torso --quick`` runs twice, each in a fresh process;
CSVs and figures must be byte-identical, and ``report.md`` too apart from its wall-clock lines
(``_N rows, T s._``).
"""

import pathlib
import re
import subprocess
import sys

import pytest

COMMAND = ["-m", "difimpact._cli", "reproduce", "crutch-critical-friction", "biped-torso", "--quick", "--quiet"]
TIMING = re.compile(r"^_\d+ rows, [0-9.]+ s\._$", re.MULTILINE)


def _run(out: pathlib.Path) -> dict[str, bytes]:
    subprocess.run([sys.executable, *COMMAND, "--out", str(out)], check=True, capture_output=True, timeout=600)
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
        else:
            assert first[name] == second[name], name
