#!/usr/bin/env python3
"""Draws chart.svg: the synthetic Qwen3-30B-A3B on one H200 and split by layers over two (run 3 of
README.md), decode (tg128) and prompt (pp512) speed per memory scenario, uniform and skewed
routing. Numbers are copied from README.md."""

SCENARIOS = ["1 GPU, all", "2 GPUs, all", "1 GPU 10 GiB", "2 × 10 GiB", "1 GPU 20 GiB", "1 GPU 12 GiB", "2 × 6 GiB"]
# (tg128, pp512) per scenario; skewed routing has no "all" rows (same as uniform when all fit).
UNIFORM = [(323.2, 2121.8), (319.4, 2116.4), (96.5, 1709.2), (317.3, 2122.2), (325.6, 2126.8), (103.1, 1887.6), (107.7, 1713.4)]
SKEWED = [None, None, (168.2, 2225.1), (319.2, 2378.2), (324.7, 2383.2), (173.3, 2212.2), (177.6, 2216.2)]
TWO_GPUS = {1, 3, 6}
COLORS = {"one": "#2b6cb0", "two": "#dd6b20"}


def panel(title, index, x0, y0, w, h):
    top = max(v[index] for row in (UNIFORM, SKEWED) for v in row if v) * 1.12
    out = [f'<text x="{x0}" y="{y0 - 14}" font-size="15" font-weight="bold">{title}</text>']
    group_w = w / len(SCENARIOS)
    for i, name in enumerate(SCENARIOS):
        for j, (rows, opacity) in enumerate(((UNIFORM, 1.0), (SKEWED, 0.55))):
            v = rows[i]
            x = x0 + i * group_w + group_w * (0.1 + 0.4 * j)
            color = COLORS["two" if i in TWO_GPUS else "one"]
            if v is None:
                continue
            bh = h * v[index] / top
            out.append(f'<rect x="{x:.1f}" y="{y0 + h - bh:.1f}" width="{group_w * 0.38:.1f}" height="{bh:.1f}" '
                       f'fill="{color}" fill-opacity="{opacity}"/>')
            out.append(f'<text x="{x + group_w * 0.19:.1f}" y="{y0 + h - bh - 3:.1f}" font-size="10" '
                       f'text-anchor="middle">{v[index]:g}</text>')
        out.append(f'<text x="{x0 + (i + 0.5) * group_w:.1f}" y="{y0 + h + 15}" font-size="11" '
                   f'text-anchor="middle">{name}</text>')
    out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y0 + h}" y2="{y0 + h}" stroke="#333"/>')
    return out


def main():
    w, h = 940, 660
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             '<text x="20" y="28" font-size="17" font-weight="bold">Synthetic Qwen3-30B-A3B on H200s: one GPU vs layers '
             'split over two (tok/s)</text>',
             '<text x="20" y="48" font-size="12">blue: one GPU, orange: two GPUs; solid: uniform routing, pale: skewed '
             'routing (Zipf 1.0); "all": every expert in VRAM, "N GiB": --vram-budget per GPU</text>']
    parts += panel("decode, tg128", 0, 40, 100, 860, 200)
    parts += panel("prompt, pp512", 1, 40, 400, 860, 200)
    parts.append("</svg>")
    with open("chart.svg", "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
