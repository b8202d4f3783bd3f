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


# Issue 51: tapegpt's default step as a share of oneDNN's bf16 rate, and
# ahead of every PyTorch (1.13 and 2.x, float32 and bf16 autocast, with and
# without scaled_dot_product_attention) on every shape; float32 ahead of
# PyTorch's float32 on S, M and G.
BF16_RATE_SHARE_TARGETS_51 = [("S", 0.85), ("M", 0.90), ("G", 0.90), ("rung1", 0.70), ("rung2", 0.70), ("rung3", 0.70)]
FP32_AHEAD_SHAPES = ["S", "M", "G"]


def issue51_targets(s):
    """Issue 51's targets as issue38_targets gives its own."""
    label = s["bf16"]["label"]
    shapes = s["shapes"]
    out = []

    def add(target, measured, ok):
        out.append(dict(target=target, measured=measured, status=_verdict(ok, label)))

    for shape, goal in BF16_RATE_SHARE_TARGETS_51:
        d = shapes.get(shape, {}).get("tapegpt_bf16")
        share = d and d.get("share_of_bf16_rate")
        add(f"{shape}: tapegpt default's model FLOP rate ≥ {100 * goal:.0f}% of oneDNN's bf16 matmul rate",
            share and f"{100 * share:.0f}%", share and share >= goal)
    for shape in shapes:
        pe = shapes[shape].get("peers") or {}
        d = pe.get("default_vs_best")
        add(f"{shape}: tapegpt default ahead of the best PyTorch",
            d and f"{d['median']:.2f}× ({pe['best']['side']})", d and d["median"] > 1.0)
    for shape in FP32_AHEAD_SHAPES:
        pe = shapes.get(shape, {}).get("peers") or {}
        f = pe.get("fp32_vs_best_fp32")
        add(f"{shape}: tapegpt --precision fp32 ahead of the best PyTorch float32",
            f and f"{f['median']:.2f}× ({pe['best_fp32']['side']})", f and f["median"] > 1.0)
    return out


def targets_markdown(targets, heading="Issue 38's targets (tapegpt's default precision, this run):", footer=None):
    L = ["", heading, "", "| target | measured | status |", "|---|---|---|"]
    L += [f"| {t['target']} | {t['measured'] or '—'} | {t['status']} |" for t in targets]
    if footer is None:
        footer = ["", "The learning targets (bf16 within 0.01 of float32, mean over 3 seeds, on nanoGPT's CPU recipe, "
                  "the demo and --preset shakespeare-fast) are scripts/bench_bf16_curves.sh's."]
    return L + footer
