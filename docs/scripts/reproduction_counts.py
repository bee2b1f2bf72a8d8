"""Write the table "What reproduces and what does not" of ``docs/reproduction.md`` from a ``difimpact reproduce``
output folder (its ``NAME/result.json`` files), so that the counts come from a run and are never kept by hand.

    difimpact reproduce --out reproduce-out          # a full run (not --quick)
    python docs/scripts/reproduction_counts.py reproduce-out [--write]

Without ``--write`` the table is printed; with it, it replaces the lines between the markers
``<!-- counts:start -->`` and ``<!-- counts:end -->`` of ``docs/reproduction.md``.
"""

import argparse
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reproduction.md"
START, END = "<!-- counts:start -->", "<!-- counts:end -->"
GAIT_PAPERS = "Gaits: McGeer 1990, Garcia et al. 1998, Goswami et al. 1998, Kuo 2002, Kelly 2017"


def table(out: pathlib.Path) -> str:
    results = [json.loads(p.read_text()) for p in sorted(out.glob("*/result.json"))]
    if not results:
        raise SystemExit(f"no */result.json under {out}: run `difimpact reproduce --out {out}` first")
    quick = [r["name"] for r in results if r["quick"]]
    groups: dict[str, list[dict]] = {}
    for r in results:
        key = r["paper"] if r["seed"] else GAIT_PAPERS if r["name"].startswith("gait-") else r["paper"] or r["name"]
        if r["name"] == "heelstrike-measured":
            key = "Measured heel strikes against Ros et al. 2015"
        groups.setdefault(key, []).append(r)
    lines = ["| paper | experiments | ✓ | ✗ |", "|---|---|---|---|"]
    total = [0, 0, 0]
    for key, rs in groups.items():
        ok = sum(c["ok"] for r in rs for c in r["checks"])
        bad = sum(not c["ok"] for r in rs for c in r["checks"])
        total = [total[0] + len(rs), total[1] + ok, total[2] + bad]
        lines.append(f"| {key} | {', '.join(f'`{r['name']}`' for r in rs)} | {ok} | {bad} |")
    lines.append(f"| **all** | {total[0]} | **{total[1]}** | **{total[2]}** |")
    mode = f"a `--quick` run of {', '.join(quick)}" if quick else "a full run"
    lines += ["", f"*Counted by `docs/scripts/reproduction_counts.py` from {mode} of `difimpact reproduce`.*"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path, help="the --out folder of a `difimpact reproduce` run")
    parser.add_argument("--write", action="store_true", help=f"replace the table in {PAGE.relative_to(ROOT)}")
    args = parser.parse_args()
    text = table(args.out)
    if not args.write:
        print(text)
        return
    page = PAGE.read_text()
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    PAGE.write_text(f"{head}{START}\n{text}\n{END}{tail}")


if __name__ == "__main__":
    main()
