#!/usr/bin/env python3
"""Draws chart.svg: the synthetic Qwen3-30B-A3B all in VRAM on one H200 and over two, split by
layers and by tensor (NCCL, copies), as README.md reports it: pp512, pp4096 and tg128. Numbers are
copied from README.md's tables."""

CONFIGS = ["1 GPU", "2 GPUs, layer split", "2 GPUs, tensor, NCCL", "2 GPUs, tensor, copies",
           "tensor, NCCL eager"]
COLORS = ["#2b6cb0", "#dd6b20", "#2f855a", "#68d391", "#a0aec0"]
# test -> value per config (None: not measured)
TESTS = {
    "pp512": [9639.5, 9732.6, 12480.4, 12483.2, None],
    "pp4096 (-b 4096)": [13720.2, 13802.5, 21081.1, 21065.6, None],
    "tg128": [324.9, 324.0, 225.9, 196.0, 141.6],
}


def panel(title, values, x0, y0, w, h):
    top = max(v for v in values if v) * 1.15
    out = [f'<text x="{x0}" y="{y0 - 12}" font-size="14" font-weight="bold">{title}</text>']
    bar_w = w / len(values)
    for i, v in enumerate(values):
        if v is None:
            continue
        bh = h * v / top
        x = x0 + i * bar_w + bar_w * 0.1
        out.append(f'<rect x="{x:.1f}" y="{y0 + h - bh:.1f}" width="{bar_w * 0.8:.1f}" height="{bh:.1f}" fill="{COLORS[i]}"/>')
        out.append(f'<text x="{x + bar_w * 0.4:.1f}" y="{y0 + h - bh - 3:.1f}" font-size="10" text-anchor="middle">{v:g}</text>')
    out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y0 + h}" y2="{y0 + h}" stroke="#333"/>')
    return out


def main():
    w, h = 960, 380
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             '<text x="20" y="28" font-size="17" font-weight="bold">Synthetic Qwen3-30B-A3B, every expert in VRAM: '
             'one H200 vs two, by layer and by tensor (tok/s)</text>']
    for i, name in enumerate(CONFIGS):
        x = 20 + i * 185
        parts.append(f'<rect x="{x}" y="42" width="12" height="12" fill="{COLORS[i]}"/>')
        parts.append(f'<text x="{x + 16}" y="53" font-size="11">{name}</text>')
    for j, (title, values) in enumerate(TESTS.items()):
        parts += panel(title, values, 30 + j * 310, 100, 280, 240)
    parts.append("</svg>")
    with open("chart.svg", "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
