#!/usr/bin/env python3
"""Draws chart.svg: Strata (this run) vs llama.cpp and ik_llama.cpp (BENCHMARKS.md) and the issue's
targets, per scenario, for prompt (pp512) and decode (tg) speed. Numbers are copied from README.md."""

SCENARIOS = ["all in VRAM", "10 GiB, uniform", "10 GiB, skew 1.0", "all experts in RAM"]
# (strata, llama.cpp, ik_llama.cpp, target); None: not measured / no anchor
PP512 = [(1639, 7469, 4910, 7469), (1399, 580, 1690, 2535), (1691, 580, 1690, 2535), (1220, 312, 1334, 1670)]
TG = [(121.4, 311, 249, 466), (64.2, 77.8, 68.9, 117), (90.9, 77.8, 68.9, 117), (33.8, 45.3, 44.8, 90)]
SERIES = [("Strata", "#2b6cb0"), ("llama.cpp", "#a0aec0"), ("ik_llama.cpp", "#718096")]


def panel(title, data, x0, y0, w, h, unit):
    top = max(max(v for v in row if v) for row in data) * 1.1
    out = [f'<text x="{x0}" y="{y0 - 12}" font-size="15" font-weight="bold">{title}</text>']
    group_w = w / len(data)
    bar_w = group_w / (len(SERIES) + 1.5)
    for i, row in enumerate(data):
        gx = x0 + i * group_w + bar_w * 0.5
        for j, (name, color) in enumerate(SERIES):
            v = row[j]
            bh = h * v / top
            x = gx + j * bar_w
            out.append(f'<rect x="{x:.1f}" y="{y0 + h - bh:.1f}" width="{bar_w * 0.9:.1f}" height="{bh:.1f}" fill="{color}"/>')
            out.append(f'<text x="{x + bar_w * 0.45:.1f}" y="{y0 + h - bh - 3:.1f}" font-size="10" text-anchor="middle">{v:g}</text>')
        target = row[3]
        ty = y0 + h - h * target / top
        out.append(f'<line x1="{gx - 2:.1f}" x2="{gx + bar_w * len(SERIES) + 2:.1f}" y1="{ty:.1f}" y2="{ty:.1f}" '
                   f'stroke="#c53030" stroke-width="2" stroke-dasharray="5,3"/>')
        out.append(f'<text x="{gx + bar_w * 1.5:.1f}" y="{y0 + h + 16}" font-size="11" text-anchor="middle">{SCENARIOS[i]}</text>')
    out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y0 + h}" y2="{y0 + h}" stroke="#333"/>')
    out.append(f'<text x="{x0 - 8}" y="{y0 + 10}" font-size="10" text-anchor="end">{unit}</text>')
    return out


def main():
    w, h = 900, 640
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             '<text x="20" y="28" font-size="17" font-weight="bold">Synthetic Qwen3-30B-A3B on one H200: Strata vs peers '
             '(tok/s; dashed red: issue target)</text>']
    parts += panel("pp512", PP512, 70, 80, 800, 200, "tok/s")
    parts += panel("tg (tg128 in VRAM, tg64 otherwise)", TG, 70, 370, 800, 200, "tok/s")
    for j, (name, color) in enumerate(SERIES):
        parts.append(f'<rect x="{560 + j * 110}" y="44" width="12" height="12" fill="{color}"/>')
        parts.append(f'<text x="{576 + j * 110}" y="55" font-size="12">{name}</text>')
    parts.append("</svg>")
    with open("chart.svg", "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
