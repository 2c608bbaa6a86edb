#!/usr/bin/env python3
"""Draws chart.svg: decode speed all in VRAM on the H200 after each change of this round (tg128 and
tg128 at depth 8192), against llama.cpp (BENCHMARKS.md) and the issue's targets. Numbers are
copied from README.md."""

STEPS = ["start", "int8 mat-vec", "fewer launches", "split attn", "one-column", "grouped attn", "final"]
TG128 = [121.4, 217.3, 225.4, 211.2, 272.8, 323.1, 325.0]
TG_D8192 = [None, 19.8, None, 59.5, 64.3, 243.6, 248.6]  # None: not measured
LLAMA = {"tg128": 311, "tg128 @ d8192": 260}
TARGET = {"tg128": 466, "tg128 @ d8192": 390}


def panel(title, values, key, x0, y0, w, h):
    top = max(TARGET[key], max(v for v in values if v)) * 1.1
    out = [f'<text x="{x0}" y="{y0 - 12}" font-size="15" font-weight="bold">{title}</text>']
    bar_w = w / len(values)
    for i, v in enumerate(values):
        x = x0 + i * bar_w + bar_w * 0.15
        if v is not None:
            bh = h * v / top
            out.append(f'<rect x="{x:.1f}" y="{y0 + h - bh:.1f}" width="{bar_w * 0.7:.1f}" height="{bh:.1f}" fill="#2b6cb0"/>')
            out.append(f'<text x="{x + bar_w * 0.35:.1f}" y="{y0 + h - bh - 3:.1f}" font-size="11" text-anchor="middle">{v:g}</text>')
        else:
            out.append(f'<text x="{x + bar_w * 0.35:.1f}" y="{y0 + h - 3:.1f}" font-size="10" text-anchor="middle">n/m</text>')
        out.append(f'<text x="{x + bar_w * 0.35:.1f}" y="{y0 + h + 15}" font-size="10" text-anchor="middle">{STEPS[i]}</text>')
    for label, value, color, dash in (("llama.cpp", LLAMA[key], "#718096", "2,2"), ("target", TARGET[key], "#c53030", "5,3")):
        y = y0 + h - h * value / top
        out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y:.1f}" y2="{y:.1f}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>')
        out.append(f'<text x="{x0 + w + 4}" y="{y + 4:.1f}" font-size="10" fill="{color}">{label} {value}</text>')
    out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y0 + h}" y2="{y0 + h}" stroke="#333"/>')
    return out


def main():
    w, h = 900, 620
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             '<text x="20" y="28" font-size="17" font-weight="bold">Decode on one H200, synthetic Qwen3-30B-A3B all in VRAM '
             '(tok/s, after each change)</text>']
    parts += panel("tg128", TG128, "tg128", 60, 80, 720, 200)
    parts += panel("tg128 at depth 8192", TG_D8192, "tg128 @ d8192", 60, 370, 720, 200)
    parts.append("</svg>")
    with open("chart.svg", "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
