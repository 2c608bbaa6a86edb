#!/usr/bin/env python3
"""Draws a benchmark comparison as SVG: per scenario, one bar per series (Strata and its peers) and
the target as a dashed line, one panel per test. Reads a JSON file:

  {"title": "...", "scenarios": ["all in VRAM", ...],
   "series": [["Strata", "#2b6cb0"], ["llama.cpp", "#a0aec0"], ...],
   "panels": [{"title": "pp512", "values": [[strata, peer, ...], ...], "targets": [t, ...]}, ...]}

where a value or target may be null (not measured, no anchor). Usage:
  scripts/scenario_chart.py chart.json chart.svg
"""
import json
import sys


def panel(spec, series, scenarios, x0, y0, w, h):
    values = spec["values"]
    targets = spec.get("targets") or [None] * len(values)
    top = max(v for row in values + [targets] for v in row if v) * 1.12
    out = [f'<text x="{x0}" y="{y0 - 12}" font-size="15" font-weight="bold">{spec["title"]}</text>']
    group_w = w / len(values)
    bar_w = group_w / (len(series) + 1.5)
    for i, row in enumerate(values):
        gx = x0 + i * group_w + bar_w * 0.5
        for j, (_, color) in enumerate(series):
            v = row[j] if j < len(row) else None
            if v is None:
                continue
            bh = h * v / top
            x = gx + j * bar_w
            out.append(f'<rect x="{x:.1f}" y="{y0 + h - bh:.1f}" width="{bar_w * 0.9:.1f}" height="{bh:.1f}" fill="{color}"/>')
            out.append(f'<text x="{x + bar_w * 0.45:.1f}" y="{y0 + h - bh - 3:.1f}" font-size="10" '
                       f'text-anchor="middle">{v:g}</text>')
        if targets[i]:
            ty = y0 + h - h * targets[i] / top
            out.append(f'<line x1="{gx - 2:.1f}" x2="{gx + bar_w * len(series) + 2:.1f}" y1="{ty:.1f}" y2="{ty:.1f}" '
                       f'stroke="#c53030" stroke-width="2" stroke-dasharray="5,3"/>')
        out.append(f'<text x="{gx + bar_w * len(series) / 2:.1f}" y="{y0 + h + 16}" font-size="11" '
                   f'text-anchor="middle">{scenarios[i]}</text>')
    out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y0 + h}" y2="{y0 + h}" stroke="#333"/>')
    out.append(f'<text x="{x0 - 8}" y="{y0 + 10}" font-size="10" text-anchor="end">tok/s</text>')
    return out


def main():
    spec = json.load(open(sys.argv[1]))
    series, scenarios, panels = spec["series"], spec["scenarios"], spec["panels"]
    panel_h, gap = 200, 90
    w, h = 900, 80 + len(panels) * (panel_h + gap)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="20" y="28" font-size="17" font-weight="bold">{spec["title"]}</text>']
    for k, p in enumerate(panels):
        parts += panel(p, series, scenarios, 70, 80 + k * (panel_h + gap), 800, panel_h)
    for j, (name, color) in enumerate(series):
        parts.append(f'<rect x="{20 + j * 130}" y="44" width="12" height="12" fill="{color}"/>')
        parts.append(f'<text x="{36 + j * 130}" y="55" font-size="12">{name}</text>')
    parts.append('<text x="420" y="55" font-size="12" fill="#c53030">dashed: the issue\'s target</text>')
    parts.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
