#!/usr/bin/python3
"""The table of scripts/bench_budget.sh: reads the results it wrote, one
tab-separated row per run

    corpus  minutes  arm  wall_s  rc  best  val_loss  bits_per_byte  note

(arm: budget, defaults or pytorch; rc: the training command's exit status;
best: 1 when it left best.h5; val_loss and bits_per_byte from `tapegpt eval`
of best.h5 on the whole of val.bin, "-" when there is none), prints the
table in markdown with the machine's header above it, writes it to --md,
and exits 1 when a run failed, left no best.h5 that `tapegpt eval` scores or
ran past budget × 1.10 + --slack-s seconds (the issue's wall-time target),
else 0.

    budget_table.py RESULTS.tsv --header HEADER.txt --md TABLE.md [--slack-s 10]
"""
import argparse
import sys

TARGET_RATIO = 0.90         # --budget's bits per byte ÷ the defaults' on the same corpus and budget
WALL_TARGET = 1.10          # wall time ÷ budget
SHAKESPEARE_LOSS = {5: 1.55, 60: 1.47}  # the issue's validation-loss targets, Tiny Shakespeare char


def fail(message):
    sys.stderr.write(f"budget_table: error: {message}\n")
    sys.exit(2)


def number(text):
    return None if text in ("", "-") else float(text)


def read_results(path):
    rows = []
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 9:
                    fail(f"{path} line {n} has {len(fields)} fields, not 9")
                corpus, minutes, arm, wall, rc, best, loss, bpb, note = fields
                rows.append(dict(corpus=corpus, minutes=float(minutes), arm=arm, wall=float(wall), rc=int(rc),
                                 best=best == "1", loss=number(loss), bpb=number(bpb), note=note))
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    return rows


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--header", required=True, help="lines to print above the table (machine, commit, load)")
    ap.add_argument("--md", required=True, help="write the header and table here as markdown")
    ap.add_argument("--slack-s", type=float, default=0.0, help="seconds allowed past budget × 1.10")
    args = ap.parse_args()
    rows = read_results(args.results)
    try:
        with open(args.header) as f:
            header = [line.rstrip("\n") for line in f if line.strip()]
    except OSError as e:
        fail(f"cannot read {args.header}: {e.strerror}")

    by_key = {(r["corpus"], r["minutes"], r["arm"]): r for r in rows}
    problems, verdicts = [], []
    lines = ["| corpus | budget | arm | wall s | wall ÷ budget | val loss | bits/byte | budget bpb ÷ this | note |",
             "|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        budget_s = r["minutes"] * 60
        limit = budget_s * WALL_TARGET + args.slack_s
        name = f"{r['corpus']} {r['minutes']:g} min {r['arm']}"
        if r["rc"] != 0:
            problems.append(f"{name}: exit status {r['rc']}")
        elif not r["best"]:
            problems.append(f"{name}: no best.h5")
        elif r["bpb"] is None:
            problems.append(f"{name}: tapegpt eval of best.h5 failed (see the run's .log)")
        if r["wall"] > limit:
            problems.append(f"{name}: {r['wall']:.1f} s of wall time, over {limit:.0f} s")
        ratio = ""
        mine = by_key.get((r["corpus"], r["minutes"], "budget"))
        if r["arm"] != "budget" and mine and mine["bpb"] and r["bpb"]:
            q = mine["bpb"] / r["bpb"]
            ratio = f"{q:.3f}"
            if r["arm"] == "defaults":
                ok = q <= TARGET_RATIO
                ratio += " ok" if ok else " MISS"
                verdicts.append(f"{r['corpus']} {r['minutes']:g} min: --budget's bits per byte are {q:.3f}× "
                                f"the defaults' (target ≤ {TARGET_RATIO:.2f}): {'met' if ok else 'missed'}")
        target = SHAKESPEARE_LOSS.get(r["minutes"])
        if r["corpus"] == "shakespeare-char" and r["arm"] == "budget" and target and r["loss"] is not None:
            verdicts.append(f"shakespeare-char {r['minutes']:g} min: --budget's validation loss {r['loss']:.4f} "
                            f"(target ≤ {target}): {'met' if r['loss'] <= target else 'missed'}")
        lines.append(f"| {r['corpus']} | {r['minutes']:g} min | {r['arm']} | {r['wall']:.1f} | "
                     f"{r['wall'] / budget_s:.3f} | {fmt(r['loss'], '.4f')} | {fmt(r['bpb'], '.4f')} | {ratio} | "
                     f"{r['note']} |")
    text = "\n".join(header + [""] + lines + [""] + verdicts)
    if problems:
        text += "\n\nproblems:\n" + "\n".join(f"- {p}" for p in problems)
    print(text)
    with open(args.md, "w") as f:
        f.write(text + "\n")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
