#!/usr/bin/env python3
"""Plot gshmem-bench JSON (one library's file, or merge.py's side-by-side file) to a PNG: bandwidth against size
(one panel per row family; colour = variant, solid/dashed/dotted = library), latency against size, and the
single-size rows as bars. Needs matplotlib; without it, says so and exits 3 without a plot."""
import argparse
import collections
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: matplotlib is not installed here; no plot made (pip install matplotlib, or run plot.py "
              "elsewhere on the JSON)", file=sys.stderr)
        return 3
    with open(a.json) as f:
        doc = json.load(f)
    libs = doc.get("libraries") or [doc.get("library", "gshmem")]
    styles = ["-", "--", ":", "-."]

    series = collections.defaultdict(list)  # (unit, family, variant) -> rows
    for r in doc["rows"]:
        fam, _, variant = r["name"].partition("/")
        series[(r["unit"], fam, variant)].append(r)
    curves = {k: sorted(v, key=lambda r: r["bytes"]) for k, v in series.items() if len(v) >= 2}
    singles = [v[0] for k, v in series.items() if len(v) == 1]

    fams = sorted({(u, fam) for (u, fam, _) in curves})
    npanels = len(fams) + (1 if singles else 0)
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
    for ax in axes[used:]:
        ax.axis("off")
    fig.suptitle(f"gshmem-bench: {', '.join(libs)} on {doc.get('device')} ({doc.get('date')}, "
                 f"commit {str(doc.get('commit'))[:10]})", fontsize=9)
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print(f"plot.py: wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
