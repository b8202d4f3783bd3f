"""Issue 22's targets for bf16 on AMX, judged from one scripts/bench.sh run's
summary (bench_summary.summarise): each target with the figure measured,
and "met", "missed", "not run" (a row it needs is absent) or the bf16
label ("no AMX: not a result") when the bf16 rows ran on a CPU without AMX,
where no verdict is given. Figures as in the summary: a ratio "X vs Y" is
Y's step time over X's, medians over rounds.
"""

# (shape, what, the summary's figure, the target, "at least" or "below")
SPEEDUP_TARGETS = [
    ("S", "tapegpt bf16 vs PyTorch bf16 autocast", "tapegpt_bf16_vs_torch_bf16", 1.5),
    ("M", "tapegpt bf16 vs PyTorch bf16 autocast", "tapegpt_bf16_vs_torch_bf16", 2.0),
    ("G", "tapegpt bf16 vs PyTorch bf16 autocast", "tapegpt_bf16_vs_torch_bf16", 4.0),
    ("M", "tapegpt bf16 vs PyTorch float32", "tapegpt_bf16_vs_torch_fp32", 3.5),
    ("G", "tapegpt bf16 vs PyTorch float32", "tapegpt_bf16_vs_torch_fp32", 6.0),
]
BF16_RATE_SHARE_TARGETS = [("M", 0.5), ("G", 0.5)]


def _verdict(ok, label):
    if ok is None:
        return "not run"
    if label:
        return label
    return "met" if ok else "missed"


def issue22_targets(s):
    """The list of targets, each a dict: target (words), measured (words or
    None), status."""
    label = s["bf16"]["label"]
    shapes = s["shapes"]
    out = []

    def add(target, measured, ok):
        out.append(dict(target=target, measured=measured, status=_verdict(ok, label)))

    # The default: tapegpt's bf16 rows ran without --precision on AMX, so
    # the precision they report is what `auto` chose.
    ran = s["bf16"]["tapegpt_default"]
    if ran is None:
        add("`--precision auto` (the default) trains in bf16", None, None)
    else:
        add("`--precision auto` (the default) trains in bf16",
            f"{'; '.join(ran['precisions'])} ({'chosen by auto' if ran['auto'] else 'asked for'})",
            ran["precisions"] == ["bf16"] and ran["auto"])
    for shape, what, key, goal in SPEEDUP_TARGETS:
        sp = shapes.get(shape, {}).get("bf16_speedups", {}).get(key)
        add(f"{shape}: {what} ≥ {goal:.1f}×", sp and f"{sp['median']:.2f}×", sp and sp["median"] >= goal)
    for shape, goal in BF16_RATE_SHARE_TARGETS:
        d = shapes.get(shape, {}).get("tapegpt_bf16")
        share = d and d.get("share_of_bf16_rate")
        add(f"{shape}: tapegpt bf16 model FLOP rate ≥ {100 * goal:.0f}% of oneDNN's bf16 matmul rate",
            share and f"{100 * share:.0f}%", share and share >= goal)
    g = shapes.get("G", {})
    a, b = g.get("tapegpt_bf16"), g.get("tapegpt")
    rss = a and b and a.get("peak_rss_mib") and b.get("peak_rss_mib")
    add("G: tapegpt bf16 peak RSS below tapegpt float32's",
        rss and f"{a['peak_rss_mib']:.0f} MiB vs {b['peak_rss_mib']:.0f} MiB",
        rss and a["peak_rss_mib"] < b["peak_rss_mib"])
    return out


def targets_markdown(targets):
    L = ["", "Issue 22's targets (bf16 on AMX, this run):", "", "| target | measured | status |", "|---|---|---|"]
    L += [f"| {t['target']} | {t['measured'] or '—'} | {t['status']} |" for t in targets]
    L += ["", "The learning targets (bf16 within 0.01 of float32 on nanoGPT's recipe, 0.02 on the demo) are "
          "scripts/bench_bf16_curves.sh's."]
    return L
