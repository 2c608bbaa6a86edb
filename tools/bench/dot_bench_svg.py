#!/usr/bin/env python3
"""Draws quant_dot_bench JSON output as an SVG bar chart: GB/s of weights read per type and SIMD
level, with the machine's read bandwidth (measured in the same run) as a reference line.

usage: dot_bench_svg.py RESULT.json OUT.svg [--title TEXT]
Standard library only, so it runs wherever the benchmark ran.
"""
import json
import sys

LEVEL_COLOURS = {"scalar": "#9e9e9e", "avx2": "#1f77b4", "avx512": "#d62728"}


def load(path):
    data = json.load(open(path))
    bandwidth = None
    rows = {}
    for b in data["benchmarks"]:
        parts = b["name"].split("/")
        gbs = b.get("bytes_per_second", 0.0) / 1e9
        if parts[0] == "read_bandwidth":
            bandwidth = gbs
        elif parts[0] == "dot":
            rows.setdefault(parts[1], {})[parts[2]] = gbs
    return rows, bandwidth


def svg(rows, bandwidth, title):
    types = list(rows)
    levels = [lv for lv in LEVEL_COLOURS if any(lv in r for r in rows.values())]
    top = max([bandwidth or 0.0] + [v for r in rows.values() for v in r.values()]) * 1.1
    left, right, plot_h, bar_w, gap = 60, 20, 320, 10, 14
    group_w = bar_w * len(levels) + gap
    width = left + right + group_w * len(types)
    height = plot_h + 120
    y = lambda v: 40 + plot_h - v / top * plot_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>']
    for tick in range(0, int(top) + 1, max(1, int(top / 8))):
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick}</text>')
    out.append(f'<text x="14" y="{40 + plot_h / 2}" transform="rotate(-90 14 {40 + plot_h / 2})" text-anchor="middle">GB/s of weights (1 thread)</text>')
    for i, t in enumerate(types):
        x0 = left + i * group_w + gap / 2
        for j, lv in enumerate(levels):
            v = rows[t].get(lv)
            if v is None:
                continue
            x = x0 + j * bar_w
            out.append(f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bar_w - 1}" height="{40 + plot_h - y(v):.1f}" fill="{LEVEL_COLOURS[lv]}"><title>{t} {lv}: {v:.2f} GB/s</title></rect>')
        cx = x0 + bar_w * len(levels) / 2
        out.append(f'<text x="{cx:.1f}" y="{40 + plot_h + 14}" text-anchor="end" transform="rotate(-45 {cx:.1f} {40 + plot_h + 14})">{t}</text>')
    if bandwidth:
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(bandwidth):.1f}" y2="{y(bandwidth):.1f}" stroke="#2ca02c" stroke-dasharray="6 3"/>')
        out.append(f'<text x="{width - right}" y="{y(bandwidth) - 4:.1f}" text-anchor="end" fill="#2ca02c">read bandwidth, 1 thread: {bandwidth:.1f} GB/s</text>')
    lx = left
    for lv in levels:
        out.append(f'<rect x="{lx}" y="{height - 18}" width="10" height="10" fill="{LEVEL_COLOURS[lv]}"/><text x="{lx + 14}" y="{height - 9}">{lv}</text>')
        lx += 70
    out.append("</svg>")
    return "\n".join(out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "CPU dot kernels"
    rows, bandwidth = load(sys.argv[1])
    open(sys.argv[2], "w").write(svg(rows, bandwidth, title))


if __name__ == "__main__":
    main()
