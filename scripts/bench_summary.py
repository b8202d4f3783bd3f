#!/usr/bin/python3
"""Summarises one run of scripts/bench.sh: reads the raw JSON lines it left
in RAW_DIR (one line per round and side) and prints a markdown summary:
whether the baseline was fair (same OpenBLAS file, build and core on both
sides), OpenBLAS's sgemm rate, step times and speed-ups per round, each
side's model FLOP rate as a share of the sgemm rate, optimizer shares,
memory, sampling speed, and tapegpt's per-kernel profile. Medians over
rounds; a speed-up is PyTorch's step time over tapegpt's.

  bench_summary.py RAW_DIR --shapes "S M G" --commit abc1234 [--json F] [--md F]
"""
import argparse
import json
import os
import re
import statistics
import sys

PROFILE_ORDER = ["matmul", "attention", "layernorm", "gelu", "softmax", "embedding", "optimizer"]


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
    vals = [r[key] for r in rows if key in r]
    return statistics.median(vals) if vals else None


def fmt(x, spec=".0f", none="—"):
    return none if x is None else format(x, spec)


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
    p_rows = [r for sh in shapes for r in load(raw, f"torch-{sh}")] + sg_p
    tg_lib = os.path.realpath(args.blas_lib) if args.blas_lib else None
    fair = dict(
        tapegpt=dict(lib=tg_lib, builds=sorted({r["blas_build"] for r in t_rows + sg_t}),
                     cores=sorted({r["blas_core"] for r in t_rows + sg_t}),
                     verbose_core=verbose_core(raw, f"tapegpt-{shapes[0]}"),
                     threads=sorted({r["threads"] for r in t_rows + sg_t}), wait_policy=args.tapegpt_wait_policy),
        torch=dict(libs=sorted({os.path.realpath(l) for r in p_rows for l in r.get("blas_libs", [])}),
                   builds=sorted({r.get("blas_build", "?") for r in p_rows}),
                   cores=sorted({r.get("blas_core", "?") for r in p_rows}),
                   verbose_core=verbose_core(raw, f"torch-{shapes[0]}"),
                   threads=sorted({r["threads"] for r in p_rows}),
                   blas_threads=sorted({r.get("blas_threads") for r in p_rows}),
                   wait_policy=args.torch_wait_policy,
                   adamw=sorted({r["adamw"] for r in p_rows if "adamw" in r}),
                   framework=p_rows[0]["framework"] if p_rows else None))
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
    fair["fair"] = bool(p_rows) and not problems
    fair["problems"] = problems
    s["fairness"] = fair

    for sh in shapes:
        t, p = load(raw, f"tapegpt-{sh}"), load(raw, f"torch-{sh}")
        if not t:
            continue
        fpt = t[0]["flops_per_token"]
        row = dict(batch=t[0]["batch"], T=t[0]["T"], flops_per_token=fpt, rounds=len(t),
                   tapegpt=dict(step_s=med(t, "step_s"), step_s_rounds=[r["step_s"] for r in t],
                                tokens_per_s=med(t, "tokens_per_s"), optimizer_s=med(t, "optimizer_s"),
                                peak_rss_mib=med(t, "peak_rss_mib"), sample_tokens_per_s=med(t, "sample_tokens_per_s")))
        profile = {k: statistics.median(r["profile_s"][k] for r in t) for k in t[0].get("profile_s", {})}
        row["tapegpt"]["profile_s"] = profile
        # The step's matmuls alone (the profile's replayed sgemm calls) as a
        # share of the sgemm rate: how much better matmul shapes could give.
        mm = t[0].get("matmul_flops_per_token")
        if mm and sgemm and profile.get("matmul"):
            row["tapegpt"]["matmul_share_of_sgemm"] = mm * row["batch"] * row["T"] / profile["matmul"] / (sgemm * 1e9)
        if p:
            if (p[0]["batch"], p[0]["T"]) != (row["batch"], row["T"]):
                sys.exit(f"bench_summary.py: shape {sh}: tapegpt ran B={row['batch']} T={row['T']}, "
                         f"PyTorch B={p[0]['batch']} T={p[0]['T']}")
            row["torch"] = dict(step_s=med(p, "step_s"), step_s_rounds=[r["step_s"] for r in p],
                                tokens_per_s=med(p, "tokens_per_s"), optimizer_s=med(p, "optimizer_s"),
                                peak_rss_mib=med(p, "peak_rss_mib"), sample_tokens_per_s=med(p, "sample_tokens_per_s"))
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
        s["shapes"][sh] = row
    return s


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
          f"| optimizer | clip + AdamW + zeroing, one pass | clip_grad_norm_, AdamW ({', '.join(p['adamw'])}), zero_grad(set_to_none=True) |",
          f"| framework | tapegpt {s['commit']} | {p['framework']} |", ""]
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
    profiled = {sh: r["tapegpt"]["profile_s"] for sh, r in s["shapes"].items() if r["tapegpt"]["profile_s"]}
    if profiled:
        keys = [k for k in PROFILE_ORDER if any(k in pr for pr in profiled.values())]
        keys += sorted({k for pr in profiled.values() for k in pr} - set(keys))
        L += ["", "tapegpt's step by kernel (`tapegpt bench` profile: kernels replayed with the step's shapes, "
              "the optimizer timed in the real step; % of the profile's sum):", "",
              "| kernel | " + " | ".join(profiled) + " |", "|---|" + "---|" * len(profiled)]
        for k in keys:
            L.append(f"| {k} | " + " | ".join(fmt(pr.get(k) and 100 * pr[k] / sum(pr.values()), '.1f') + "%"
                                                 for pr in profiled.values()) + " |")
        L.append("| matmuls' own rate, % of sgemm rate | " + " | ".join(
            fmt(s["shapes"][sh]["tapegpt"].get("matmul_share_of_sgemm") and
                100 * s["shapes"][sh]["tapegpt"]["matmul_share_of_sgemm"]) + "%" for sh in profiled) + " |")
        L.append("| sum / measured step | " + " | ".join(
            f"{sum(pr.values()):.3f} / {s['shapes'][sh]['tapegpt']['step_s']:.3f} s" for sh, pr in profiled.items()) + " |")
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--blas-lib", help="the libopenblas tapegpt loads (ldd)")
    ap.add_argument("--torch-wait-policy", default="PASSIVE", help="OMP_WAIT_POLICY given to PyTorch")
    ap.add_argument("--tapegpt-wait-policy", default="default", help="OMP_WAIT_POLICY given to tapegpt")
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
