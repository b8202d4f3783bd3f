"""Issue 38's targets for tapegpt's default precision, judged from one
scripts/bench.sh run's summary (bench_summary.summarise): each target with
the figure measured, and "met", "missed", "not run" (a row it needs is
absent) or the bf16 label ("bf16 emulated: not a result") when the bf16
rows ran where oneDNN only emulates bf16, where no verdict is given.
Figures as in the summary: a ratio "X vs Y" is Y's step time over X's,
medians over rounds. Where oneDNN runs bf16 natively (AVX512_BF16, AMX),
tapegpt's bf16 row is its default flags (--precision auto), so "tapegpt
default" below is that row.
"""

# (shape, what, the summary's figure, the target)
SPEEDUP_TARGETS = [
    ("S", "tapegpt default vs the better of PyTorch float32 and bf16 autocast", "tapegpt_bf16_vs_torch_best", 1.8),
    ("M", "tapegpt default vs the better of PyTorch float32 and bf16 autocast", "tapegpt_bf16_vs_torch_best", 1.5),
    ("G", "tapegpt default vs the better of PyTorch float32 and bf16 autocast", "tapegpt_bf16_vs_torch_best", 2.7),
    ("S", "tapegpt default vs tapegpt float32", "tapegpt_bf16_vs_tapegpt_fp32", 1.5),
    ("M", "tapegpt default vs tapegpt float32", "tapegpt_bf16_vs_tapegpt_fp32", 1.5),
    ("G", "tapegpt default vs tapegpt float32", "tapegpt_bf16_vs_tapegpt_fp32", 1.5),
]
BF16_RATE_SHARE_TARGETS = [("S", 0.75), ("M", 0.85), ("G", 0.85)]
DEFAULT_TARGET = "`--precision auto` (the default) trains in bf16 where oneDNN runs it natively"


def _verdict(ok, label):
    if ok is None:
        return "not run"
    if label:
        return label
    return "met" if ok else "missed"


def issue38_targets(s):
    """The list of targets, each a dict: target (words), measured (words or
    None), status."""
    label = s["bf16"]["label"]
    shapes = s["shapes"]
    out = []

    def add(target, measured, ok):
        out.append(dict(target=target, measured=measured, status=_verdict(ok, label)))

    # The default: where bf16 is native tapegpt's bf16 rows ran without
    # --precision, so the precision they report is what `auto` chose.
    ran = s["bf16"]["tapegpt_default"]
    if ran is None:
        add(DEFAULT_TARGET, None, None)
    else:
        add(DEFAULT_TARGET, f"{'; '.join(ran['precisions'])} ({'chosen by auto' if ran['auto'] else 'asked for'})",
            ran["precisions"] == ["bf16"] and ran["auto"])
    for shape, what, key, goal in SPEEDUP_TARGETS:
        sp = shapes.get(shape, {}).get("bf16_speedups", {}).get(key)
        add(f"{shape}: {what} ≥ {goal:.1f}×", sp and f"{sp['median']:.2f}×", sp and sp["median"] >= goal)
    for shape, goal in BF16_RATE_SHARE_TARGETS:
        d = shapes.get(shape, {}).get("tapegpt_bf16")
        share = d and d.get("share_of_bf16_rate")
        add(f"{shape}: tapegpt default's model FLOP rate ≥ {100 * goal:.0f}% of oneDNN's bf16 matmul rate",
            share and f"{100 * share:.0f}%", share and share >= goal)
    return out


def targets_markdown(targets):
    L = ["", "Issue 38's targets (tapegpt's default precision, this run):", "",
         "| target | measured | status |", "|---|---|---|"]
    L += [f"| {t['target']} | {t['measured'] or '—'} | {t['status']} |" for t in targets]
    L += ["", "The learning targets (bf16 within 0.01 of float32, mean over 3 seeds, on nanoGPT's CPU recipe, the "
          "demo and --preset shakespeare-fast) are scripts/bench_bf16_curves.sh's."]
    return L
