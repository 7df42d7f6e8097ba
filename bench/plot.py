#!/usr/bin/env python3
"""Plot gshmem-bench JSON (one library's file, or merge.py's side-by-side file) to a PNG: bandwidth against size
(one panel per row family; colour = variant, solid/dashed/dotted = library; the all-to-all rows put_bw_all and
get_bw_all get their own panels this way), latency against size, the single-size rows as bars, and, for rows
measured at several PE counts (names ending in /pes=<n>, from bench-gpu.sh's PES_LIST), latency against the PE
count: one panel for barriers, one for ping-pongs, one for the rest. Needs matplotlib; without it, says so and
exits 3 without a plot."""
import argparse
import collections
import json
import re
import sys

PES_SUFFIX = re.compile(r"^(.*)/pes=(\d+)$")


def pes_category(base):
    fam = base.split("/")[0]
    if "barrier" in fam or "sync" in fam:
        return "barrier and sync"
    if "pingpong" in fam:
        return "ping-pong"
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("plot.py: matplotlib is not installed here; no plot made (pip install matplotlib, or run plot.py "
              "elsewhere on the JSON)", file=sys.stderr)
        return 3
    with open(a.json) as f:
        doc = json.load(f)
    libs = doc.get("libraries") or [doc.get("library", "gshmem")]
    styles = ["-", "--", ":", "-."]

    series = collections.defaultdict(list)  # (unit, family, variant) -> rows
    by_pes = collections.defaultdict(list)  # (category, unit) -> (base name, bytes, pes, row)
    for r in doc["rows"]:
        m = PES_SUFFIX.match(r["name"])
        if m:
            by_pes[(pes_category(m.group(1)), r["unit"])].append((m.group(1), r["bytes"], int(m.group(2)), r))
            continue
        fam, _, variant = r["name"].partition("/")
        series[(r["unit"], fam, variant)].append(r)
    pes_panels = sorted(k for k, v in by_pes.items() if len({p for (_, _, p, _) in v}) >= 2)
    # Rows of one PE count only (run-cpu.sh's collective rows at 4 PEs beside unnamed 2-PE ones): no PE-count panel;
    # drawn against size like the others, "pes=<n>" in the variant.
    for key, v in by_pes.items():
        if key not in pes_panels:
            for base, _, pes, r in v:
                fam, _, variant = base.partition("/")
                series[(r["unit"], fam, f"{variant} pes={pes}".strip())].append(r)
    curves = {k: sorted(v, key=lambda r: r["bytes"]) for k, v in series.items() if len(v) >= 2}
    singles = [v[0] for k, v in series.items() if len(v) == 1]

    fams = sorted({(u, fam) for (u, fam, _) in curves})
    npanels = len(fams) + (1 if singles else 0) + len(pes_panels)
    cols = 2
    nrows = max(1, (npanels + cols - 1) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(14, 4.2 * nrows), squeeze=False)
    axes = [ax for row in axes for ax in row]
    for ax, (unit, fam) in zip(axes, fams):
        variants = sorted(v for (u, f, v) in curves if u == unit and f == fam)
        cmap = plt.get_cmap("tab20")
        for i, var in enumerate(variants):
            rows = curves[(unit, fam, var)]
            for j, lib in enumerate(libs):
                pts = [(r["bytes"], r[lib]) for r in rows if lib in r]
                if pts:
                    ax.plot(*zip(*pts), styles[j % len(styles)], color=cmap(i % 20), marker=".",
                            label=f"{var or fam} [{lib}]")
        ax.set_xscale("log", base=2)
        if unit != "GB/s":
            ax.set_yscale("log")
        ax.set_title(f"{fam} ({unit})")
        ax.set_xlabel("bytes")
        ax.set_ylabel(unit)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=5, ncol=2)
    used = len(fams)
    if singles:
        ax = axes[used]
        used += 1
        labels = [f"{r['name']} [{r['unit']}]" for r in singles]
        h = 0.8 / len(libs)
        for j, lib in enumerate(libs):
            vals = [r.get(lib, 0) for r in singles]
            ax.barh([i + j * h for i in range(len(singles))], vals, height=h, label=lib)
        ax.set_yticks([i + h * (len(libs) - 1) / 2 for i in range(len(singles))])
        ax.set_yticklabels(labels, fontsize=6)
        ax.set_xscale("log")
        ax.set_title("single-size rows (each in its own unit)")
        ax.legend(fontsize=7)
    for cat, unit in pes_panels:
        ax = axes[used]
        used += 1
        lines = collections.defaultdict(list)  # (base name, bytes) -> [(pes, row)]
        for base, nbytes, pes, r in by_pes[(cat, unit)]:
            lines[(base, nbytes)].append((pes, r))
        cmap = plt.get_cmap("tab10")
        for i, (base, nbytes) in enumerate(sorted(lines)):
            pts = sorted(lines[(base, nbytes)], key=lambda t: t[0])
            label = base + (f" {nbytes} B" if nbytes and cat == "ping-pong" else "")
            for j, lib in enumerate(libs):
                xy = [(p, r[lib]) for p, r in pts if lib in r]
                if xy:
                    ax.plot(*zip(*xy), styles[j % len(styles)], color=cmap(i % 10), marker="o",
                            label=f"{label} [{lib}]")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted({p for (_, _, p, _) in by_pes[(cat, unit)]}))
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_yscale("log")  # device barriers (us) and host ones (tens of us) on one panel
        ax.set_title(f"{cat} against PE count ({unit})")
        ax.set_xlabel("PEs")
        ax.set_ylabel(unit)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=5, ncol=2)
    for ax in axes[used:]:
        ax.axis("off")
    fig.suptitle(f"gshmem-bench: {', '.join(libs)} on {doc.get('device')} ({doc.get('date')}, "
                 f"commit {str(doc.get('commit'))[:10]})", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    fig.savefig(a.output, dpi=110)
    print(f"plot.py: wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
