#!/usr/bin/env python3
"""Draws chart.svg: prompt speed on one H200 (synthetic Qwen3-30B-A3B, all in VRAM) for each
version of the prompt matmul (README.md, run 4 unless noted), against llama.cpp's pp512
(BENCHMARKS.md). Numbers are copied from README.md."""

STEPS = ["f32 FMA tiles", "f16 WMMA, 64 rows", "+ prefetch", "128-row tiles"]
PP512 = [2121.2, 3357.4, 3432.9, 3922.3]
PP4096 = [2531.0, 3606.5, 3683.0, 4305.6]
LLAMA_PP512 = 7469


def main():
    w, h = 860, 420
    x0, y0, pw, ph = 70, 70, 640, 280
    top = LLAMA_PP512 * 1.1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             '<text x="20" y="28" font-size="17" font-weight="bold">Prompt processing on one H200, synthetic '
             'Qwen3-30B-A3B (tok/s)</text>',
             '<text x="20" y="48" font-size="12">dark: pp512, light: pp4096 (batch 4096); dashed: llama.cpp pp512</text>']
    group = pw / len(STEPS)
    for i, name in enumerate(STEPS):
        for j, (values, color) in enumerate(((PP512, "#2b6cb0"), (PP4096, "#90cdf4"))):
            v = values[i]
            bh = ph * v / top
            x = x0 + i * group + group * (0.12 + 0.38 * j)
            parts.append(f'<rect x="{x:.1f}" y="{y0 + ph - bh:.1f}" width="{group * 0.36:.1f}" height="{bh:.1f}" fill="{color}"/>')
            parts.append(f'<text x="{x + group * 0.18:.1f}" y="{y0 + ph - bh - 4:.1f}" font-size="11" '
                         f'text-anchor="middle">{v:g}</text>')
        parts.append(f'<text x="{x0 + (i + 0.5) * group:.1f}" y="{y0 + ph + 18}" font-size="11" '
                     f'text-anchor="middle">{name}</text>')
    y = y0 + ph - ph * LLAMA_PP512 / top
    parts.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#c53030" stroke-width="2" '
                 f'stroke-dasharray="5,3"/>')
    parts.append(f'<text x="{x0 + pw + 6}" y="{y + 4:.1f}" font-size="11" fill="#c53030">llama.cpp {LLAMA_PP512}</text>')
    parts.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{y0 + ph}" y2="{y0 + ph}" stroke="#333"/>')
    parts.append("</svg>")
    with open("chart.svg", "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
