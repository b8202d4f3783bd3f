#!/usr/bin/python3
"""Summarises one run of scripts/bench.sh: reads the raw JSON lines it left
in RAW_DIR (one line per round and side) and prints a markdown summary:
whether the baseline was fair (same OpenBLAS file, build and core on both
sides, and the oneDNN file and ISA each ran), OpenBLAS's sgemm rate,
step times and speed-ups per round, each side's model FLOP rate as a share
of the sgemm rate, optimizer shares, memory, sampling speed, tapegpt's
per-kernel profile, and the bf16 steps (PyTorch under bf16 autocast, tapegpt
--precision bf16) against each other and against float32, each as a share
of oneDNN's bf16 matmul rate; or the line saying why bf16 speed was not
measured; then issue 38's targets, met or missed (scripts/bench_targets.py).
Medians over rounds; a speed-up is the other side's step time
over tapegpt's. bf16 figures are labelled with the ISA oneDNN ran: a
native one (avx512_core_bf16, avx512_core_amx) gives results for the CPUs
that have it; figures where oneDNN emulated bf16 (BF16_ANYWAY=1) are each
labelled "bf16 emulated: not a result".

  bench_summary.py RAW_DIR --shapes "S M G" --commit abc1234 [--native 0|1] [--bf16-note LINE] [--json F] [--md F]
"""
import argparse
import json
import os
import re
import statistics
import sys

from bench_targets import issue51_targets, issue38_targets, targets_markdown

PROFILE_ORDER = ["matmul", "rounding", "attention", "layernorm", "gelu", "softmax", "embedding", "optimizer"]
NOT_A_RESULT = "bf16 emulated: not a result"


def load(raw, name):
    path = os.path.join(raw, f"{name}.jsonl")
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def verbose_core(raw, name):
    """The core OpenBLAS itself printed (OPENBLAS_VERBOSE=2); the last one,
    since tapegpt may re-execute itself once with a better core."""
    path = os.path.join(raw, f"{name}.err")
    cores = re.findall(r"Core: (\S+)", open(path).read()) if os.path.exists(path) else []
    return cores[-1] if cores else None


def med(rows, key):
    """The median of rows' values of key, None when none has a value (a
    null, as --bf16-rate's rate where bf16 is emulated, is no value)."""
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(x, spec=".0f", none="—"):
    return none if x is None else format(x, spec)


def step_stats(rows):
    """One side's medians over rounds (rows: its JSON lines, one per round)."""
    return dict(step_s=med(rows, "step_s"), step_s_rounds=[r["step_s"] for r in rows],
                tokens_per_s=med(rows, "tokens_per_s"), optimizer_s=med(rows, "optimizer_s"),
                peak_rss_mib=med(rows, "peak_rss_mib"), sample_tokens_per_s=med(rows, "sample_tokens_per_s"))


def profile_medians(rows):
    """tapegpt's per-kernel profile (seconds per step by category), median over rounds; {} if not profiled."""
    return {k: statistics.median(r["profile_s"][k] for r in rows) for k in rows[0].get("profile_s", {})}


def profile_table(profiled, step_s):
    """Markdown rows of profiles {shape: {category: s}}: each category's % of the profile's sum."""
    keys = [k for k in PROFILE_ORDER if any(k in pr for pr in profiled.values())]
    keys += sorted({k for pr in profiled.values() for k in pr} - set(keys))
    L = ["| kernel | " + " | ".join(profiled) + " |", "|---|" + "---|" * len(profiled)]
    for k in keys:
        L.append(f"| {k} | " + " | ".join(fmt(pr.get(k) and 100 * pr[k] / sum(pr.values()), '.1f') + "%"
                                         for pr in profiled.values()) + " |")
    L.append("| sum / measured step | " + " | ".join(
        f"{sum(pr.values()):.3f} / {step_s[sh]:.3f} s" for sh, pr in profiled.items()) + " |")
    return L


def onednn_ran(rows):
    """What oneDNN's verbose lines said PyTorch's steps ran: the isa: line
    (None: no oneDNN primitive ran) and each kernel with its count in one step."""
    isas = sorted({r.get("onednn_isa") or "none ran" for r in rows})
    ran = {}
    for r in rows[:1]:
        ran = r.get("onednn_ran", {})
    return dict(isa=isas, ran=ran)


# Every PyTorch side bench.sh may run (issue 51): Debian 12's 1.13 and
# forky's 2.x, float32 and bf16 autocast, 2.x with and without
# F.scaled_dot_product_attention.
PEER_SIDES = ["torch", "torch-bf16", "torch2", "torch2-sdpa", "torch2-bf16", "torch2-bf16-sdpa"]


def best_of(sides):
    """The fastest of {side: step_stats}: its name and median, and the
    fastest of all of them round by round."""
    n = min(len(d["step_s_rounds"]) for d in sides.values())
    name = min(sides, key=lambda k: sides[k]["step_s"])
    return dict(side=name, step_s=sides[name]["step_s"],
                step_s_rounds=[min(d["step_s_rounds"][i] for d in sides.values()) for i in range(n)])


def peers_of(raw, sh, row, native):
    """Issue 51's comparison on one shape: every PyTorch side, the best of
    them (and of the float32 ones), and tapegpt's default (bf16 where
    native, else float32) and float32 steps against them, as medians and
    round by round."""
    peers = {side: step_stats(rows) for side in PEER_SIDES if (rows := load(raw, f"{side}-{sh}"))}
    if not peers:
        return None
    out = dict(sides={k: dict(step_s=v["step_s"], framework=load(raw, f"{k}-{sh}")[0].get("framework"))
                      for k, v in peers.items()},
               best=best_of(peers))
    fp32 = {k: v for k, v in peers.items() if "bf16" not in k}
    if fp32:
        out["best_fp32"] = best_of(fp32)
    default = row.get("tapegpt_bf16") if native else row.get("tapegpt")

    def ratio(mine, theirs):
        return dict(median=theirs["step_s"] / mine["step_s"],
                    rounds=[b / a for a, b in zip(mine["step_s_rounds"], theirs["step_s_rounds"])])
    if default:
        out["default_vs_best"] = ratio(default, out["best"])
    if row.get("tapegpt") and fp32:
        out["fp32_vs_best_fp32"] = ratio(row["tapegpt"], out["best_fp32"])
    return out


def summarise(args):
    raw = args.raw
    shapes = args.shapes.split()
    header = open(os.path.join(raw, "header.txt")).read().strip().splitlines()
    sg_t, sg_p = load(raw, "sgemm-tapegpt"), load(raw, "sgemm-torch")
    sgemm = med(sg_t, "sgemm_rate_gflops")
    s = dict(commit=args.commit, quick=args.quick, header=header, shapes={})
    s["sgemm"] = dict(
        rate_gflops=sgemm, rounds=[r["sgemm_rate_gflops"] for r in sg_t],
        by_size={n: statistics.median(r["sgemm_gflops_by_size"][n] for r in sg_t) for n in sg_t[0]["sgemm_gflops_by_size"]},
        torch_mm_rate_gflops=med(sg_p, "sgemm_rate_gflops"))

    # Fairness: what each process reported about the OpenBLAS it ran.
    t_rows = [r for sh in shapes for r in load(raw, f"tapegpt-{sh}")]
    tb_rows = [r for sh in shapes for r in load(raw, f"tapegpt-bf16-{sh}")]
    pf_rows = [r for sh in shapes for r in load(raw, f"torch-{sh}")]
    pb_rows = [r for sh in shapes for r in load(raw, f"torch-bf16-{sh}")]
    bf_t, bf_p = load(raw, "bf16-rate-tapegpt"), load(raw, "bf16-rate-torch")
    p_rows = pf_rows + pb_rows + sg_p + bf_p
    tg_lib = os.path.realpath(args.blas_lib) if args.blas_lib else None
    fair = dict(
        tapegpt=dict(lib=tg_lib, builds=sorted({r["blas_build"] for r in t_rows + sg_t}),
                     cores=sorted({r["blas_core"] for r in t_rows + sg_t}),
                     verbose_core=verbose_core(raw, f"tapegpt-{shapes[0]}"),
                     threads=sorted({r["threads"] for r in t_rows + tb_rows + sg_t}),
                     wait_policy=args.tapegpt_wait_policy,
                     dnnl_lib=os.path.realpath(args.dnnl_lib) if args.dnnl_lib else None,
                     dnnl_isa=sorted({r["dnnl_isa"] for r in bf_t + tb_rows if "dnnl_isa" in r}),
                     dnnl_version=sorted({r["dnnl_version"] for r in bf_t if "dnnl_version" in r}),
                     precision=sorted({r.get("precision", "fp32 (no --precision)") for r in t_rows})),
        torch=dict(libs=sorted({os.path.realpath(l) for r in p_rows for l in r.get("blas_libs", [])}),
                   builds=sorted({r.get("blas_build", "?") for r in p_rows}),
                   cores=sorted({r.get("blas_core", "?") for r in p_rows}),
                   verbose_core=verbose_core(raw, f"torch-{shapes[0]}"),
                   threads=sorted({r["threads"] for r in p_rows}),
                   blas_threads=sorted({r.get("blas_threads") for r in p_rows}),
                   wait_policy=args.torch_wait_policy,
                   adamw=sorted({r["adamw"] for r in p_rows if "adamw" in r}),
                   framework=p_rows[0]["framework"] if p_rows else None,
                   dnnl_libs=sorted({os.path.realpath(l) for r in p_rows for l in r.get("onednn_libs", [])}),
                   onednn_fp32=onednn_ran(pf_rows) if pf_rows else None,
                   onednn_bf16=onednn_ran(pb_rows) if pb_rows else None,
                   onednn_mm=onednn_ran(bf_p) if bf_p else None))
    problems = []
    if p_rows:
        t, p = fair["tapegpt"], fair["torch"]
        if tg_lib and tg_lib not in p["libs"]:
            problems.append(f"PyTorch mapped {p['libs']}, not tapegpt's {tg_lib}")
        if p["libs"] and len([l for l in p["libs"] if "libopenblas" in l]) > 1:
            problems.append("PyTorch mapped more than one OpenBLAS")
        if t["builds"] != p["builds"]:
            problems.append(f"builds differ: tapegpt {t['builds']}, PyTorch {p['builds']}")
        if t["cores"] != p["cores"] or len(t["cores"]) != 1:
            problems.append(f"cores differ: tapegpt {t['cores']}, PyTorch {p['cores']}")
        if t["verbose_core"] != p["verbose_core"]:
            problems.append(f"OPENBLAS_VERBOSE cores differ: {t['verbose_core']} vs {p['verbose_core']}")
        if t["threads"] != p["threads"]:
            problems.append(f"threads differ: tapegpt {t['threads']}, PyTorch {p['threads']}")
        if (pb_rows or tb_rows) and t["dnnl_lib"] and p["dnnl_libs"] != [t["dnnl_lib"]]:
            problems.append(f"oneDNN files differ: tapegpt {t['dnnl_lib']}, PyTorch {p['dnnl_libs']}")
    if any(r.get("precision", "fp32") != "fp32" for r in t_rows):
        problems.append(f"tapegpt's float32 rows ran {t_rows[0].get('precision')}: "
                        f"{t_rows[0].get('precision_reason', 'no reason given')}")
    if any(r.get("precision") != "bf16" for r in tb_rows):
        problems.append(f"tapegpt's bf16 rows ran {tb_rows[0].get('precision')}: "
                        f"{tb_rows[0].get('precision_reason', 'no reason given')}")
    fair["fair"] = bool(p_rows) and not problems
    fair["problems"] = problems
    s["fairness"] = fair

    # oneDNN's bf16 matmul rate, the rate each bf16 step's model FLOP rate is
    # a share of: the best of what this run measured on the same matmuls,
    # so that no slow reference flatters a share: `tapegpt bench --bf16-rate`
    # (the larger of tapegpt's pieces and oneDNN's own whole calls; null
    # where bf16 is emulated unless --emulated) and torch.mm in bf16 (PyTorch's
    # oneDNN calls).
    tg_bf16 = med(bf_t, "bf16_rate_gflops")
    pt_bf16 = med(bf_p, "bf16_rate_gflops")
    measured = [(v, src) for v, src in ((tg_bf16, "tapegpt bench --bf16-rate"),
                                        (pt_bf16, "torch.mm in bfloat16, bench_torch.py --bf16-mm-rate"))
                if v is not None]
    best_rate, best_source = max(measured) if measured else (None, None)
    bf16_rows = bool(pb_rows or tb_rows)
    s["bf16"] = dict(
        native=bool(args.native), measured=bool(args.native) and bf16_rows, note=args.bf16_note or None,
        label=None if args.native or not bf16_rows else NOT_A_RESULT,
        isa=(sorted({r["dnnl_isa"] for r in bf_t if "dnnl_isa" in r}) or [None])[0],
        tapegpt_missing=args.tapegpt_bf16_missing,
        # Where bf16 is native tapegpt's bf16 rows run on the default,
        # --precision auto: what it chose there is the issue's "trains in
        # bf16 by default".
        tapegpt_default=dict(precisions=sorted({r.get("precision", "fp32") for r in tb_rows}),
                             auto=all(r.get("precision_reason", "").startswith("auto") for r in tb_rows))
        if tb_rows else None,
        tapegpt_precision=sorted({f"{r.get('precision')} ({r.get('precision_reason', 'no reason given')})"
                                  for r in tb_rows}),
        rate_gflops=best_rate, rate_source=best_source,
        tapegpt_rate_gflops=tg_bf16, tapegpt_rounds=[r["bf16_rate_gflops"] for r in bf_t if r.get("bf16_rate_gflops")],
        tapegpt_pieces_rate_gflops=med(bf_t, "tapegpt_bf16_rate_gflops"),
        onednn_whole_call_rate_gflops=med(bf_t, "onednn_whole_call_rate_gflops"),
        tapegpt_kernels=sorted({k for r in bf_t for k in r.get("dnnl_kernels", [])}),
        onednn_whole_call_kernels=sorted({k for r in bf_t for k in r.get("dnnl_whole_call_kernels", [])}),
        tapegpt_fp32_rate_gflops=med(bf_t, "fp32_rate_gflops"),
        torch_mm_rate_gflops=pt_bf16, torch_mm_rounds=[r["bf16_rate_gflops"] for r in bf_p])
    bf16_rate = s["bf16"]["rate_gflops"]

    for sh in shapes:
        t, p = load(raw, f"tapegpt-{sh}"), load(raw, f"torch-{sh}")
        if not t:
            continue
        fpt = t[0]["flops_per_token"]
        row = dict(batch=t[0]["batch"], T=t[0]["T"], flops_per_token=fpt, rounds=len(t),
                   tapegpt=dict(step_s=med(t, "step_s"), step_s_rounds=[r["step_s"] for r in t],
                                tokens_per_s=med(t, "tokens_per_s"), optimizer_s=med(t, "optimizer_s"),
                                peak_rss_mib=med(t, "peak_rss_mib"), sample_tokens_per_s=med(t, "sample_tokens_per_s")))
        profile = profile_medians(t)
        row["tapegpt"]["profile_s"] = profile
        # The step's matmuls alone (the profile's replayed sgemm calls) as a
        # share of the sgemm rate: how much better matmul shapes could give.
        mm = t[0].get("matmul_flops_per_token")
        if mm and sgemm and profile.get("matmul"):
            row["tapegpt"]["matmul_share_of_sgemm"] = mm * row["batch"] * row["T"] / profile["matmul"] / (sgemm * 1e9)
        for name, rows in (("PyTorch", p), ("PyTorch bf16 autocast", load(raw, f"torch-bf16-{sh}")),
                           ("tapegpt bf16", load(raw, f"tapegpt-bf16-{sh}"))):
            if rows and (rows[0]["batch"], rows[0]["T"]) != (row["batch"], row["T"]):
                sys.exit(f"bench_summary.py: shape {sh}: tapegpt ran B={row['batch']} T={row['T']}, "
                         f"{name} B={rows[0]['batch']} T={rows[0]['T']}")
        if p:
            row["torch"] = step_stats(p)
            row["speedup"] = row["torch"]["step_s"] / row["tapegpt"]["step_s"]
            row["speedup_rounds"] = [b["step_s"] / a["step_s"] for a, b in zip(t, p)]
            # Note [Speed-up ceiling]: the speed-up tapegpt would show if every
            # matmul ran at this run's sgemm rate and nothing else (attention,
            # norms, the optimizer) cost any time: no implementation that
            # calls this OpenBLAS can beat it against this PyTorch run.
            if mm and sgemm:
                row["speedup_ceiling"] = row["torch"]["step_s"] / (mm * row["batch"] * row["T"] / (sgemm * 1e9))
            if row["tapegpt"]["sample_tokens_per_s"] and row["torch"]["sample_tokens_per_s"]:
                row["sample_speedup"] = row["tapegpt"]["sample_tokens_per_s"] / row["torch"]["sample_tokens_per_s"]
        for side in ("tapegpt", "torch"):
            if side in row:
                d = row[side]
                d["model_gflops"] = d["tokens_per_s"] * fpt / 1e9
                d["share_of_sgemm"] = d["model_gflops"] / sgemm if sgemm else None
                d["optimizer_share"] = d["optimizer_s"] / d["step_s"]
        # The bf16 steps: each against the other and against float32, and
        # as a share of oneDNN's bf16 matmul rate (as the float32 steps of
        # the sgemm rate).
        tb, pb = load(raw, f"tapegpt-bf16-{sh}"), load(raw, f"torch-bf16-{sh}")
        for side, rows in (("tapegpt_bf16", tb), ("torch_bf16", pb)):
            if rows:
                d = row[side] = step_stats(rows)
                d["model_gflops"] = d["tokens_per_s"] * fpt / 1e9
                d["share_of_bf16_rate"] = d["model_gflops"] / bf16_rate if bf16_rate else None
                d["optimizer_share"] = d["optimizer_s"] / d["step_s"]
                d["label"] = s["bf16"]["label"]
        if tb:
            row["tapegpt_bf16"]["profile_s"] = profile_medians(tb)
        ratios = {}  # name: (slower side, faster side), each a step time over the other's

        def ratio(name, num, den):
            if num in row and den in row:
                ratios[name] = dict(median=row[num]["step_s"] / row[den]["step_s"],
                                    rounds=[b / a for a, b in zip(row[den]["step_s_rounds"], row[num]["step_s_rounds"])])
        ratio("tapegpt_bf16_vs_torch_bf16", "torch_bf16", "tapegpt_bf16")
        ratio("tapegpt_bf16_vs_torch_fp32", "torch", "tapegpt_bf16")
        ratio("tapegpt_bf16_vs_tapegpt_fp32", "tapegpt", "tapegpt_bf16")
        ratio("torch_bf16_vs_torch_fp32", "torch", "torch_bf16")
        # Against the better PyTorch: the faster of its float32 and bf16
        # autocast steps, round by round (issue 38's headline).
        if "tapegpt_bf16" in row and "torch" in row and "torch_bf16" in row:
            best = [min(a, b) for a, b in zip(row["torch"]["step_s_rounds"], row["torch_bf16"]["step_s_rounds"])]
            ratios["tapegpt_bf16_vs_torch_best"] = dict(
                median=min(row["torch"]["step_s"], row["torch_bf16"]["step_s"]) / row["tapegpt_bf16"]["step_s"],
                rounds=[b / a for a, b in zip(row["tapegpt_bf16"]["step_s_rounds"], best)])
        if ratios:
            row["bf16_speedups"] = dict(ratios, label=s["bf16"]["label"])
        if "tapegpt" in row and "step_s_rounds" not in row["tapegpt"]:
            row["tapegpt"]["step_s_rounds"] = [r["step_s"] for r in t]
        peers = peers_of(raw, sh, row, bool(args.native))
        if peers:
            row["peers"] = peers
        s["shapes"][sh] = row
    s["targets"] = issue38_targets(s)
    s["targets51"] = issue51_targets(s)
    return s


def onednn_cell(p, s):
    """PyTorch's oneDNN ISA column: the isa: line of each step kind it ran,
    and the kernels one bf16 step ran (oneDNN's verbose mode, one untimed step)."""
    first = next(iter(s["shapes"]), "?")
    parts = [f"float32 step: {', '.join(p['onednn_fp32']['isa']) if p['onednn_fp32'] else 'not run'}"
             + (" (its matmuls are OpenBLAS's)" if p["onednn_fp32"] and p["onednn_fp32"]["isa"] == ["none ran"] else "")]
    if p["onednn_bf16"]:
        ran = ", ".join(f"{k} ×{n}" for k, n in p["onednn_bf16"]["ran"].items()) or "no primitive"
        parts.append(f"bf16 autocast step: isa: {', '.join(p['onednn_bf16']['isa'])} (one {first} step ran {ran})")
    if p["onednn_mm"]:
        parts.append(f"torch.mm bfloat16: {', '.join(f'{k} ×{n}' for k, n in p['onednn_mm']['ran'].items())}")
    return "; ".join(parts)


def bf16_markdown(s):
    """The bf16 section: oneDNN's bf16 matmul rate and the bf16 steps, or why not measured."""
    b = s["bf16"]
    rows = {sh: r for sh, r in s["shapes"].items() if "tapegpt_bf16" in r or "torch_bf16" in r}
    if not rows:
        return ["", b["note"] or "bf16: no bf16 row ran."]
    label = b["label"]
    L = [""]
    if label:
        L += [f"**bf16 figures below: {label}.** {b['note'] or 'bf16 speed not measured here'}; BF16_ANYWAY=1 timed "
              "them only to check the script.", ""]
    else:
        L += [f"**bf16 figures below: oneDNN ran {b['isa']} (native bf16)**: results for the CPUs where oneDNN runs "
              "that ISA.", ""]
    src = b["rate_source"]
    if b["rate_gflops"] is not None:
        from_tapegpt = src == "tapegpt bench --bf16-rate"
        rounds = b["tapegpt_rounds"] if from_tapegpt else b["torch_mm_rounds"]
        tg = (f"`tapegpt bench --bf16-rate`: tapegpt's bf16 kernels {fmt(b['tapegpt_pieces_rate_gflops'], '.1f')} "
              f"GFLOP/s ({', '.join(b['tapegpt_kernels']) or '—'}), oneDNN's own whole calls "
              f"{fmt(b['onednn_whole_call_rate_gflops'], '.1f')} GFLOP/s "
              f"({', '.join(b['onednn_whole_call_kernels']) or '—'}), float32 (OpenBLAS) through tapegpt "
              f"{fmt(b['tapegpt_fp32_rate_gflops'], '.1f')} GFLOP/s"
              if b["tapegpt_rate_gflops"] is not None else "`tapegpt bench --bf16-rate` measured nothing (bf16 emulated)")
        L += [f"oneDNN bf16 matmul rate (the best this run measured on the forward, input- and weight-gradient "
              f"matmuls of GPT-2's qkv, MLP and lm_head layers and M's qkv, their FLOPs over their summed medians, "
              f"here {src}; median over {len(rounds)} rounds): **{b['rate_gflops']:.1f} GFLOP/s**"
              f"{f' ({label})' if label else ''} (rounds {', '.join(f'{r:.1f}' for r in rounds)}); torch.mm in "
              f"bfloat16: {fmt(b['torch_mm_rate_gflops'], '.1f')} GFLOP/s; {tg}.", ""]
    else:
        L += ["oneDNN bf16 matmul rate: not measured.", ""]
    if b["tapegpt_missing"]:
        L += [f"tapegpt bf16: not run ({b['tapegpt_missing']}).", ""]
    if b["tapegpt_precision"]:
        L += [f"tapegpt's bf16 rows ran: {'; '.join(b['tapegpt_precision'])}.", ""]
    L += ["| shape | status | tapegpt bf16 ms/step | PyTorch bf16 autocast ms/step | tapegpt bf16 vs better PyTorch "
          "| per round | tapegpt bf16 vs PyTorch autocast | tapegpt bf16 vs PyTorch fp32 | tapegpt bf16 vs tapegpt fp32 "
          "| PyTorch autocast vs PyTorch fp32 "
          "| model GFLOP/s tapegpt bf16 / PyTorch autocast | % of oneDNN bf16 rate tapegpt bf16 / PyTorch autocast "
          "| peak RSS MiB tapegpt bf16 / PyTorch autocast |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for sh, r in rows.items():
        a, c = r.get("tapegpt_bf16"), r.get("torch_bf16")
        sp = r.get("bf16_speedups", {})
        x = lambda name: f"{sp[name]['median']:.2f}×" if name in sp else "—"
        pct = lambda d: f"{100 * d['share_of_bf16_rate']:.0f}%" if d and d["share_of_bf16_rate"] else "—"
        per_round = " ".join(f"{v:.2f}" for v in sp.get("tapegpt_bf16_vs_torch_best", {}).get("rounds", []))
        L.append(f"| {sh} ({r['batch']}, {r['T']}) | {label or 'measured (' + str(s['bf16']['isa']) + ')'} "
                 f"| {fmt(a and 1e3 * a['step_s'], '.1f')} | {fmt(c and 1e3 * c['step_s'], '.1f')} "
                 f"| {x('tapegpt_bf16_vs_torch_best')} | {per_round or '—'} | {x('tapegpt_bf16_vs_torch_bf16')} "
                 f"| {x('tapegpt_bf16_vs_torch_fp32')} "
                 f"| {x('tapegpt_bf16_vs_tapegpt_fp32')} | {x('torch_bf16_vs_torch_fp32')} "
                 f"| {fmt(a and a['model_gflops'], '.1f')} / {fmt(c and c['model_gflops'], '.1f')} "
                 f"| {pct(a)} / {pct(c)} | {fmt(a and a['peak_rss_mib'])} / {fmt(c and c['peak_rss_mib'])} |")
    profiled = {sh: r["tapegpt_bf16"]["profile_s"] for sh, r in rows.items()
                if r.get("tapegpt_bf16", {}).get("profile_s")}
    if profiled:
        # Where a bf16 step's time goes: whether attention (float32 sums in
        # both precisions) is worth the tiles too, and what the roundings cost.
        L += ["", f"tapegpt bf16's step by kernel{f' ({label})' if label else ''} (`tapegpt bench --precision bf16` "
              "profile: the bf16 linear op's calls replayed with the step's shapes, its roundings and attention's "
              "apart; attention's sums, norms and the rest float32 as in the step; % of the profile's sum):", ""]
        L += profile_table(profiled, {sh: rows[sh]["tapegpt_bf16"]["step_s"] for sh in profiled})
    L += targets_markdown(s["targets"])
    L += ["", "A ratio \"X vs Y\" is Y's step time over X's (above 1: X is faster). The bf16 rows time the step only: "
          "forward and loss in bf16 (PyTorch: under torch.autocast(\"cpu\", dtype=torch.bfloat16)), backward, clip "
          "and AdamW as in float32."]
    return L


def peers_markdown(s):
    """Every PyTorch against tapegpt, shape by shape, and issue 51's targets."""
    rows = {sh: r for sh, r in s["shapes"].items() if r.get("peers")}
    if not rows:
        return []
    sides = [k for k in PEER_SIDES if any(k in r["peers"]["sides"] for r in rows.values())]
    frameworks = sorted({d["framework"] for r in rows.values() for d in r["peers"]["sides"].values() if d["framework"]})
    L = ["", f"Every PyTorch this run timed ({', '.join(frameworks)}; ms/step, median over rounds), the best of them, "
         "and tapegpt's default (bf16 where oneDNN runs it natively) and float32 steps against the best (above 1: "
         "tapegpt is faster):", "",
         "| shape | " + " | ".join(sides) + " | best | tapegpt default vs best | per round | tapegpt fp32 vs best "
         "PyTorch float32 | per round |", "|---|" + "---|" * (len(sides) + 5)]
    for sh, r in rows.items():
        pe = r["peers"]
        cells = [fmt(pe["sides"].get(k, {}).get("step_s") and 1e3 * pe["sides"][k]["step_s"], ".1f") for k in sides]
        d, f = pe.get("default_vs_best"), pe.get("fp32_vs_best_fp32")
        L.append(f"| {sh} | " + " | ".join(cells) + f" | {pe['best']['side']} | {fmt(d and d['median'], '.2f')}× "
                 f"| {' '.join(f'{x:.2f}' for x in d['rounds']) if d else '—'} | {fmt(f and f['median'], '.2f')}× "
                 f"| {' '.join(f'{x:.2f}' for x in f['rounds']) if f else '—'} |")
    L += targets_markdown(s["targets51"], "Issue 51's targets (this run):", [])
    return L


def markdown(s):
    L = []
    if s["quick"]:
        L += ["**QUICK RUN (`--quick`): checks the script end to end; its figures are not measurements.**", ""]
    L += ["```"] + s["header"] + ["```", ""]
    f = s["fairness"]
    t, p = f["tapegpt"], f["torch"]
    L += ["Fair baseline: " + ("**yes**" if f["fair"] else "**NO** — " + "; ".join(f["problems"] or ["no PyTorch run"])), "",
          "| | tapegpt | PyTorch |", "|---|---|---|",
          f"| OpenBLAS file | {t['lib']} | {', '.join(p['libs']) or '—'} |",
          f"| build (openblas_get_parallel) | {', '.join(t['builds'])} | {', '.join(p['builds'])} |",
          f"| core (openblas_get_corename) | {', '.join(t['cores'])} | {', '.join(p['cores'])} |",
          f"| core (OpenBLAS's own OPENBLAS_VERBOSE=2 line) | {t['verbose_core']} | {p['verbose_core']} |",
          f"| threads | {', '.join(map(str, t['threads']))} | {', '.join(map(str, p['threads']))} "
          f"(OpenBLAS: {', '.join(map(str, p['blas_threads']))}) |",
          f"| OpenMP wait | {t['wait_policy']} | {p['wait_policy']} |",
          f"| optimizer | clip + AdamW + zeroing, one pass (rungs: Muon over the blocks' matrices, AdamW over the rest) "
          f"| clip_grad_norm_, AdamW ({', '.join(p['adamw'])}) (rungs: Muon and AdamW), zero_grad(set_to_none=True) |",
          f"| framework | tapegpt {s['commit']} | {p['framework']} |",
          f"| oneDNN file (bf16 matmuls) | {t['dnnl_lib'] or '—'} | {', '.join(p['dnnl_libs']) or '—'} |",
          f"| oneDNN ISA | {', '.join(t['dnnl_isa']) or '—'} (`tapegpt bench --bf16-rate`: oneDNN "
          f"{', '.join(t['dnnl_version']) or '?'}'s effective ISA) | {onednn_cell(p, s)} |",
          f"| precision | {', '.join(t['precision'])}{'; bf16' if any('tapegpt_bf16' in r for r in s['shapes'].values()) else ''} "
          f"| float32{'; bf16 autocast' if p['onednn_bf16'] else ''} |", ""]
    g = s["sgemm"]
    sizes = ", ".join(f"{n}³ {v:.1f}" for n, v in g["by_size"].items())
    L += [f"OpenBLAS sgemm rate (`tapegpt bench --sgemm-rate`, median of 7 calls per size, best size; "
          f"median over {len(g['rounds'])} rounds): **{g['rate_gflops']:.1f} GFLOP/s** ({sizes}; rounds "
          f"{', '.join(f'{r:.1f}' for r in g['rounds'])}); torch.mm on the same sizes: "
          f"{fmt(g['torch_mm_rate_gflops'], '.1f')} GFLOP/s.", ""]
    L += ["| shape (B, T) | tapegpt ms/step | PyTorch ms/step | speed-up | per round | ceiling | model GFLOP/s tapegpt / PyTorch "
          "| % of sgemm rate tapegpt / PyTorch | optimizer share tapegpt / PyTorch | peak RSS MiB tapegpt / PyTorch |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for sh, r in s["shapes"].items():
        a, b = r["tapegpt"], r.get("torch")
        pct = lambda d: fmt(d and d["share_of_sgemm"] and 100 * d["share_of_sgemm"])
        L.append(f"| {sh} ({r['batch']}, {r['T']}) | {1e3 * a['step_s']:.1f} | {fmt(b and 1e3 * b['step_s'], '.1f')} "
                 f"| {fmt(r.get('speedup'), '.2f')}× | {' '.join(f'{x:.2f}' for x in r.get('speedup_rounds', []))} "
                 f"| {fmt(r.get('speedup_ceiling'), '.2f')}× "
                 f"| {a['model_gflops']:.1f} / {fmt(b and b['model_gflops'], '.1f')} | {pct(a)}% / {pct(b)}% "
                 f"| {100 * a['optimizer_share']:.1f}% / {fmt(b and 100 * b['optimizer_share'], '.1f')}% "
                 f"| {a['peak_rss_mib']:.0f} / {fmt(b and b['peak_rss_mib'])} |")
    L += ["", "Ceiling: PyTorch's step time over the time the step's matmuls alone (6 × matmul parameters × B × T FLOPs) "
          "would take at the sgemm rate above, as if nothing else cost any time: the largest speed-up any "
          "implementation calling this OpenBLAS could show against this PyTorch run (Note [Speed-up ceiling] in "
          "scripts/bench_summary.py)."]
    L += ["", "| shape | sampling tok/s tapegpt | PyTorch | ratio |", "|---|---|---|---|"]
    for sh, r in s["shapes"].items():
        b = r.get("torch")
        L.append(f"| {sh} | {fmt(r['tapegpt']['sample_tokens_per_s'], '.1f')} | {fmt(b and b['sample_tokens_per_s'], '.1f')} "
                 f"| {fmt(r.get('sample_speedup'), '.2f')}× |")
    L += peers_markdown(s)
    L += bf16_markdown(s)
    profiled = {sh: r["tapegpt"]["profile_s"] for sh, r in s["shapes"].items() if r["tapegpt"]["profile_s"]}
    if profiled:
        L += ["", "tapegpt's step by kernel (`tapegpt bench` profile: kernels replayed with the step's shapes, "
              "the optimizer timed in the real step; % of the profile's sum):", ""]
        table = profile_table(profiled, {sh: s["shapes"][sh]["tapegpt"]["step_s"] for sh in profiled})
        table.insert(-1, "| matmuls' own rate, % of sgemm rate | " + " | ".join(
            fmt(s["shapes"][sh]["tapegpt"].get("matmul_share_of_sgemm") and
                100 * s["shapes"][sh]["tapegpt"]["matmul_share_of_sgemm"]) + "%" for sh in profiled) + " |")
        L += table
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--blas-lib", help="the libopenblas tapegpt loads (ldd)")
    ap.add_argument("--torch-wait-policy", default="PASSIVE", help="OMP_WAIT_POLICY given to PyTorch")
    ap.add_argument("--tapegpt-wait-policy", default="default", help="OMP_WAIT_POLICY given to tapegpt")
    ap.add_argument("--dnnl-lib", help="the libdnnl tapegpt loads (ldd)")
    ap.add_argument("--native", type=int, choices=[0, 1], default=0,
                    help="1: oneDNN runs bf16 natively here (AVX512_BF16 or AMX-BF16): bf16 figures are results")
    ap.add_argument("--bf16-note", default="", help="why bf16 speed was not measured (bench.sh's line)")
    ap.add_argument("--tapegpt-bf16-missing", help="why tapegpt's bf16 row did not run")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--md")
    args = ap.parse_args()
    s = summarise(args)
    md = markdown(s)
    sys.stdout.write(md)
    if args.md:
        open(args.md, "w").write(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(s, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
