#!/usr/bin/env python3
"""Draws chart.svg: Strata against llama.cpp on one H200 with the synthetic Qwen3-30B-A3B
(README.md; llama.cpp's numbers are BENCHMARKS.md's), before this round's kernels and after, as
ratios to llama.cpp. Numbers are copied from README.md."""

# (test, before, after, llama.cpp)
ROWS = [
    ("pp512", 3921.8, 9730.0, 7469),
    ("pp4096 @ d8192", 2013.5, 10457.4, 7123),
    ("tg128", 320.3, 326.6, 311),
    ("tg128 @ d8192", 248.6, 250.9, 260),
    ("RAM pp512", 2086.0, 2863.4, 1334),
    ("RAM tg64", 53.5, 55.4, 45.3),
]


def main():
    w, h = 900, 440
    x0, y0, pw, ph = 70, 80, 700, 280
    top = 4.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             '<text x="20" y="28" font-size="17" font-weight="bold">Strata / best peer, one H200, synthetic '
             'Qwen3-30B-A3B</text>',
             '<text x="20" y="50" font-size="12">light: before this round (tensor-core f16 tiles, FMA flash '
             'attention, no PDL), dark: after; dashed: 1.0 (the peer); RAM = every expert in RAM</text>']
    group = pw / len(ROWS)
    for i, (name, before, after, peer) in enumerate(ROWS):
        for j, (v, color) in enumerate(((before, "#90cdf4"), (after, "#2b6cb0"))):
            r = v / peer
            bh = ph * min(r, top) / top
            x = x0 + i * group + group * (0.12 + 0.38 * j)
            parts.append(f'<rect x="{x:.1f}" y="{y0 + ph - bh:.1f}" width="{group * 0.36:.1f}" height="{bh:.1f}" '
                         f'fill="{color}"/>')
            parts.append(f'<text x="{x + group * 0.18:.1f}" y="{y0 + ph - bh - 4:.1f}" font-size="11" '
                         f'text-anchor="middle">{r:.2f}×</text>')
        parts.append(f'<text x="{x0 + (i + 0.5) * group:.1f}" y="{y0 + ph + 18}" font-size="11" '
                     f'text-anchor="middle">{name}</text>')
    y = y0 + ph - ph / top
    parts.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#c53030" stroke-width="2" '
                 f'stroke-dasharray="5,3"/>')
    parts.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{y0 + ph}" y2="{y0 + ph}" stroke="#333"/>')
    parts.append("</svg>")
    with open("chart.svg", "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
