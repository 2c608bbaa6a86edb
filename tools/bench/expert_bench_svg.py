#!/usr/bin/env python3
"""Draws expert_matmul_bench JSON output as an SVG bar chart: per weight type, the expert products'
throughput as a share of the DRAM read bandwidth measured beside it (the `of_bandwidth` counter),
one bar per result file (e.g. before / after, or two machines), with a line at the target share.

usage: expert_bench_svg.py OUT.svg LABEL=RESULT.json [LABEL=RESULT.json ...] [--title TEXT] [--target 0.7]
Standard library only, so it runs wherever the benchmark ran.
"""
import json
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"]


def load(path):
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        out[b["name"].split("/")[1]] = b["of_bandwidth"]
    return out


def main(argv):
    title, target, series = "Expert products / DRAM bandwidth", 0.7, []
    i = 2
    out = argv[1]
    while i < len(argv):
        if argv[i] == "--title":
            title, i = argv[i + 1], i + 2
        elif argv[i] == "--target":
            target, i = float(argv[i + 1]), i + 2
        else:
            label, path = argv[i].split("=", 1)
            series.append((label, load(path)))
            i += 1
    types = []
    for _, rows in series:
        types += [t for t in rows if t not in types]
    bar, gap, left, top, height = 14, 10, 70, 40, 260
    group = bar * len(series) + gap
    width = left + group * len(types) + 20
    top_value = max(1.1, max(v for _, r in series for v in r.values()) * 1.05)
    y = lambda v: top + height - v / top_value * height
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + 90}" font-family="sans-serif" font-size="11">',
             f'<text x="{left}" y="20" font-size="14">{title}</text>']
    for tick in [0, 0.25, 0.5, 0.75, 1.0]:
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.0%}</text>')
    parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y(target):.1f}" y2="{y(target):.1f}" stroke="#000" stroke-dasharray="4,3"/>')
    parts.append(f'<text x="{width - 12}" y="{y(target) - 4:.1f}" text-anchor="end">target {target:.0%}</text>')
    for ti, t in enumerate(types):
        x0 = left + ti * group + gap / 2
        for si, (_, rows) in enumerate(series):
            if t not in rows:
                continue
            v = rows[t]
            parts.append(f'<rect x="{x0 + si * bar:.1f}" y="{y(v):.1f}" width="{bar - 2}" height="{top + height - y(v):.1f}" fill="{COLOURS[si % 4]}"><title>{t}: {v:.1%}</title></rect>')
        cx = x0 + bar * len(series) / 2
        parts.append(f'<text x="{cx:.1f}" y="{top + height + 14}" text-anchor="end" transform="rotate(-45 {cx:.1f} {top + height + 14})">{t}</text>')
    for si, (label, _) in enumerate(series):
        lx = left + si * 260
        parts.append(f'<rect x="{lx}" y="{top + height + 62}" width="10" height="10" fill="{COLOURS[si % 4]}"/>')
        parts.append(f'<text x="{lx + 14}" y="{top + height + 71}">{label}</text>')
    parts.append("</svg>")
    open(out, "w").write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main(sys.argv)
