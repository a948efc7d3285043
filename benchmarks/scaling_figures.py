"""The GPU figures of docs/scaling.md against their raw files (issue 34, part 1).

Every table of GPU figures in the doc is preceded by a marker line that says where its numbers come
from:

    <!-- figures: NAME source=results/gpu/2026-12-01-h100-80gb-hbm3 -->
        the table is generated from that run's raw files (``results.jsonl``, ``log.txt``,
        ``environment.json``, ``profile.json``; results/gpu/README.md): ``--check`` regenerates it
        and fails when the doc's table differs, ``--write`` puts the regenerated table in the doc;
    <!-- figures: NAME source=none check=floor|hours KEY=VALUE ... -->
        the table is NOT backed by committed raw files (the doc says so beside it): ``--check``
        says that in one line and checks the table's own arithmetic from the inputs the marker
        states (``check=floor``: the unique-token floor fractions against the measured and the
        nominal peak, from prompts/s, the unit's unique tokens and prompts, and each Pythia shape's
        non-embedding parameters; ``check=hours``: GPU-hours from prompts/s), so a figure cannot
        drift from the numbers it is computed from.

A generated table uses ONE run's measured matmul peak for the floor fractions and shows the
fraction of the card's nominal dense fp16/bf16 peak beside it (``NOMINAL_PEAK``).

    python benchmarks/scaling_figures.py --check            # the suite runs this (tests/test_scaling_figures.py)
    python benchmarks/scaling_figures.py --write            # regenerate the backed tables in place
    python benchmarks/scaling_figures.py --check --doc D --root R   # another doc / repository root

Needs numpy, and torch for the ``check=floor`` of a synthetic unit (its unique tokens are recomputed
with ``engine_overhead.yago_unit``, whose module imports the engine from ``src``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "scaling.md"
NOMINAL_PEAK = {"H100": 989e12, "H200": 989e12}  # dense bf16/fp16 FLOP/s of the SXM parts (gpu.py)
PYTHIA = {"70m": (512, 6), "160m": (768, 12), "410m": (1024, 24), "1b": (2048, 16), "1.4b": (2048, 24)}
PYTHIA |= {"2.8b": (2560, 32), "6.9b": (4096, 32), "12b": (5120, 36), "smoke": (64, 4)}  # hidden, layers
RUN_FILES = ("results.jsonl", "log.txt", "environment.json", "profile.json")
MARKER = re.compile(r"^<!-- figures: (?P<name>\S+) (?P<opts>.*?)\s*-->$")


def pythia_params(shape: str) -> int:
    """Non-embedding parameters of a Pythia shape (GPT-NeoX, intermediate 4 x hidden, biases, two
    layer norms a layer and a final one): 12 h^2 + 13 h a layer + 2 h. 6.9b: 6.444 B."""
    h, layers = PYTHIA[shape]
    return layers * (12 * h * h + 13 * h) + 2 * h


def numbers(cell: str) -> list[float]:
    """The numbers of a table cell in order: '4,645 → **4,972**' -> [4645, 4972]."""
    return [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", cell.replace("**", ""))]


def decimals(cell: str) -> list[int]:
    return [len(x.split(".")[1]) if "." in x else 0 for x in re.findall(r"\d[\d,]*(?:\.\d+)?", cell)]


def tables(lines: list[str]) -> list[tuple[str, dict[str, str], int, int]]:
    """(name, options, first line, end line) of each marked table: the marker, then the table's
    lines (after blank lines) until the first line that does not start with '|'."""
    out = []
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m:
            continue
        opts = dict(kv.split("=", 1) for kv in m["opts"].split())
        s = i + 1
        while s < len(lines) and not lines[s].strip():
            s += 1
        e = s
        while e < len(lines) and lines[e].startswith("|"):
            e += 1
        out.append((m["name"], opts, s, e))
    return out


def parse_table(rows: list[str]) -> list[dict[str, str]]:
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
    head = cells[0]
    return [dict(zip(head, r)) for r in cells[2:]]


# ------------------------------------------------------------------ tables backed by raw files


def load_run(folder: Path) -> tuple[dict, list[dict], list[str]]:
    """(the benchmark's header, its throughput rows, what is missing) of one results folder."""
    missing = [f for f in RUN_FILES if not (folder / f).is_file()]
    rows = []
    if (folder / "results.jsonl").is_file():
        rows = [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines() if x.strip()]
    headers = [r for r in rows if r.get("bench") == "header"]
    header = next(
        (h for h in headers if h.get("unit_kind", "synthetic") == "real"), headers[0] if headers else {}
    )
    last: dict = {}  # gpu.py writes a row again as each figure is measured: its last line is whole
    for r in rows:
        if "prompts_per_s" in r and "shape" in r and "error" not in r:
            last[(r["shape"], r.get("dtype"), r.get("unit"))] = r
    return header, list(last.values()), missing


def card_nominal(device: str) -> float | None:
    return next((v for k, v in NOMINAL_PEAK.items() if k in device), None)


def token_ratio(r: dict) -> str:
    """`` at token ratio 1.9``: the tokens the competent baseline computes a prompt over the
    engine's, beside its lead (rows from before issue 41 lack it: nothing)."""
    x = r.get("vs_competent_token_ratio")
    return "" if x is None else f" at token ratio {x:.2f}"


def fmt(x, spec: str = ",.0f") -> str:
    return "–" if x is None else format(x, spec)


def throughput_table(folder: Path) -> list[str]:
    """The throughput table of one run: per shape, dtype and unit, the engine's prompts/s, tokens a
    prompt, the floor fraction against the run's measured peak and the card's nominal one, and the
    competent and naive baselines measured in the same run."""
    header, rows, _ = load_run(folder)
    peak = header.get("measured_peak_flops")
    nominal = header.get("nominal_peak_flops") or card_nominal(header.get("device", ""))
    peak_s = f"{peak / 1e12:.0f}" if peak else "?"
    nom_s = f"{nominal / 1e12:.0f}" if nominal else "?"
    out = [
        f"| shape | dtype | unit | computed tokens a prompt (of) | prompts/s | of the floor (measured peak {peak_s} "
        f"TFLOP/s) | of the nominal peak ({nom_s} TFLOP/s) | engine peak memory | batch | competent baseline "
        "| engine vs competent | ψ/χ as the engine's | naive scorer | engine vs naive |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        flop = 2 * r["non_embedding_params"] * r["unique_tokens"] if "non_embedding_params" in r else None
        if flop is None and r["shape"] in PYTHIA:
            flop = 2 * pythia_params(r["shape"]) * r["unique_tokens"]
        rate = 1 / r["seconds"] if r.get("seconds") else r["prompts_per_s"] / r["prompts"]  # units a second
        floor = flop * rate / peak if flop and peak else None
        floor_n = flop * rate / nominal if flop and nominal else None
        match = {True: "yes", False: "**no**"}.get(r.get("competent_matches"), "–")
        mem = r.get("engine_peak_mem_gib")
        out.append(
            f"| {r['shape']} | {r['dtype']} | {r.get('unit', 'synthetic')} | "
            f"{fmt(r.get('computed_tokens_per_prompt'), '.2f')} ({fmt(r.get('tokens_per_prompt'), '.2f')}) | "
            f"{r['prompts_per_s']:,} | {fmt(floor and 100 * floor, '.1f')} % | {fmt(floor_n and 100 * floor_n, '.1f')} % | "
            f"{'–' if mem is None else f'{mem} GiB'} | {r.get('batch_size', '–')} | "
            f"{fmt(r.get('competent_prompts_per_s'), ',.0f')} | {fmt(r.get('vs_competent'), '.2f')}×{token_ratio(r)} | {match} | "
            f"{fmt(r.get('naive_prompts_per_s'), ',.0f')} | {fmt(r.get('vs_naive'), '.1f')}× |"
        )
    return out


def profile_table(folder: Path) -> list[str]:
    """The top kernels of the run's profile (``profile.json``)."""
    prof = json.loads((folder / "profile.json").read_text()) if (folder / "profile.json").is_file() else []
    out = ["| profile | kernel | share | ms | calls |", "|---|---|---|---|---|"]
    for p in prof:
        for k in p.get("top_kernels", [])[:8]:
            name = k["name"][:60].replace("|", "/")
            out.append(
                f"| {p['profile']} {p['dtype']} | `{name}` | {100 * k['share']:.1f} % | {k['ms']} | {k['calls']} |"
            )
    return out


GENERATORS = {"throughput": throughput_table, "profile": profile_table}


# ------------------------------------------------------------------ tables without raw files


def synthetic_unique_tokens(contexts: int, entities: int, vocab: int = 50304) -> tuple[int, int]:
    """(prompts, unique tokens) of gpu.py's synthetic unit (``engine_overhead.yago_unit``)."""
    sys.path[:0] = [str(Path(__file__).resolve().parent), str(ROOT / "src")]
    from engine_overhead import yago_unit
    from real_units import unit_figures

    cs, qs = yago_unit(contexts, entities, vocab)
    f = unit_figures(cs, qs)
    return f["prompts"], f["unique_tokens"]


def close(stated: float, got: float, places: int, approx: bool) -> bool:
    """``stated`` equals ``got`` rounded to the stated places (within 5 % where it says ≈/≤/≥)."""
    if approx:
        return abs(stated - got) <= 0.05 * abs(got) + 0.5 * 10**-places
    return abs(stated - got) <= 0.5 * 10**-places + 1e-9


def check_floor(name: str, opts: dict[str, str], rows: list[dict[str, str]]) -> list[str]:
    """Each stated floor fraction (and nominal fraction) from the row's prompts/s."""
    errors = []
    prompts, unique = int(opts["prompts"]), int(opts["unique_tokens"])
    if "unit" in opts:  # the synthetic unit the figures were measured on: its unique tokens, recomputed
        c, e = (int(x) for x in opts["unit"].split("x"))
        got = synthetic_unique_tokens(c, e)
        if got != (prompts, unique):
            errors.append(
                f"{name}: the {opts['unit']} synthetic unit has {got[0]} prompts, {got[1]} unique tokens"
            )
    peaks = {"of the unique-token floor": float(opts["peak"]), "of the nominal peak": float(opts["nominal"])}
    for row in rows:
        shape = row["shape"]
        rates = numbers(row["prompts/s"])
        for col, peak in peaks.items():
            cell = next((v for k, v in row.items() if k.startswith(col)), None)
            if cell is None:
                errors.append(f"{name}: no column {col!r}")
                continue
            for rate, stated, places in zip(rates, numbers(cell), decimals(cell)):
                got = 100 * 2 * pythia_params(shape) * unique * rate / prompts / peak
                if not close(stated, got, places, False):
                    errors.append(
                        f"{name}: {shape} {row.get('dtype', '')} at {rate:,.0f} prompts/s is {got:.2f} % {col} "
                        f"({peak / 1e12:.0f} TFLOP/s), the doc says {stated} %"
                    )
    return errors


def check_hours(name: str, opts: dict[str, str], rows: list[dict[str, str]]) -> list[str]:
    """GPU-hours a seed (and for 3 seeds) from each row's prompts/s."""
    errors, prompts = [], float(opts["prompts"])
    hour_cols = [k for k in rows[0] if "hours" in k] if rows else []
    for row in rows:
        rate = numbers(row["prompts/s"])
        if not rate or not hour_cols:
            continue
        approx = any(c in row["prompts/s"] for c in "≈≥≤")
        per_seed = prompts / rate[0] / 3600
        for col, factor in zip(hour_cols + ["3 seeds"], (1, 3)):
            cell = row.get(col, "")
            stated = numbers(cell)
            if stated and not close(stated[0], per_seed * factor, decimals(cell)[0], approx):
                errors.append(
                    f"{name}: {row['model']} at {rate[0]:,.0f} prompts/s is {per_seed * factor:.2f} h ({col}), the doc says {stated[0]}"
                )
    return errors


CHECKS = {"floor": check_floor, "hours": check_hours}


# ------------------------------------------------------------------ the command


def run(doc: Path, root: Path, write: bool) -> tuple[list[str], list[str]]:
    """(what was checked, one line each; the errors)."""
    lines = doc.read_text().splitlines()
    said, errors, new = [], [], list(lines)
    for name, opts, s, e in reversed(tables(lines)):  # reversed: a rewrite keeps earlier line numbers
        if s == e:
            errors.append(f"{name}: no table after its marker")
            continue
        source = opts.get("source", "none")
        if source == "none":
            said.append(
                f"{name}: not backed by committed raw files; "
                + (f"its arithmetic checked ({opts['check']})" if "check" in opts else "nothing to check")
            )
            rows = parse_table(lines[s:e])
            errors += CHECKS[opts["check"]](name, opts, rows) if opts.get("check") in CHECKS else []
            continue
        folder = root / source
        _, _, missing = load_run(folder)
        if missing:
            errors.append(f"{name}: {source} lacks {', '.join(missing)}")
            continue
        kind = opts.get("table", name.split("-")[0])
        want = GENERATORS[kind](folder)
        if write:
            new[s:e] = want
        elif lines[s:e] != want:
            errors.append(
                f"{name}: the table differs from {source} (python benchmarks/scaling_figures.py --write)"
            )
        said.append(f"{name}: generated from {source}")
    if write and new != lines:
        doc.write_text("\n".join(new) + "\n")
    return said[::-1], errors


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="check the doc's figures (the default)")
    ap.add_argument("--write", action="store_true", help="regenerate the tables backed by raw files")
    ap.add_argument("--doc", default=str(DOC))
    ap.add_argument("--root", default=str(ROOT), help="where the markers' source folders are")
    args = ap.parse_args(argv)
    said, errors = run(Path(args.doc), Path(args.root), args.write)
    for line in said:
        print(line)
    for line in errors:
        print(f"ERROR {line}")
    if not said and not errors:
        print(f"{args.doc}: no marked tables")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
