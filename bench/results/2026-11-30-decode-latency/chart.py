#!/usr/bin/env python3
"""Draws chart.svg from the numbers in README.md (raw logs in raw/): on the left what each decode
op costs inside the replayed graph (run r2: tg128 with the op's kernels muted, against the same
build unmuted), on the right after/before ratios of the changes kept and of the variants tried
and dropped (runs r5, r6: each from one run, rounds alternated)."""

BASE_TG = (324.68 + 325.80) / 2  # r2 base_r1, base_r2
# r2: tg128 with the op muted (STRATA_GPU_ABLATE); the router row is left out (muting it also
# empties the plan, so the experts' kernels do no work and the difference is not the router's).
ABLATED = [
    ("matmul_experts down", 400.51), ("matmul_experts gate_up_swiglu", 380.15), ("attention (split + merge)", 376.44),
    ("matmul attn_qkv", 360.27), ("moe_combine_rms_norm", 353.87), ("matmul attn_output", 349.03),
    ("add_rms_norm ffn_norm", 345.98), ("qk_norm_rope_store", 344.24), ("quantize_q8", 333.58),
]
EXTRA_LAUNCH_US = 0.52  # r2: extra_1 / extra_2, per empty chained launch
LAYERS = 48
def mean(*v):
    return sum(v) / len(v)


# (label, after / before), each from one run, rounds alternated: kept changes, then variants tried
RATIOS = [
    ("kept: tg128 (r5)", mean(344.62, 346.82, 347.32) / mean(324.05, 326.98, 326.27)),
    ("kept: pp512 (r5)", 10189.66 / 9830.80),
    ("kept: 32 slices, d8192 (r7)", mean(275.18, 273.22) / mean(263.50, 263.38)),
    ("tried: two units a round, tg128 (r5)", mean(321.60, 322.07, 322.89) / mean(324.05, 326.98, 326.27)),
    ("tried: merge via shared, d8192 (r6)", mean(258.25, 258.37) / mean(265.71, 265.39)),
    ("tried: 16-lane rows, tg128 (r6)", mean(343.80, 347.39) / mean(348.32, 348.38)),
    ("tried: 8-lane rows, tg128 (r6)", mean(316.73, 316.72) / mean(348.32, 348.38)),
    ("tried: 16 slices, d8192 (r7)", mean(242.78, 243.71) / mean(263.50, 263.38)),
]


def per_layer_us(ablated):
    return (1e3 / BASE_TG - 1e3 / ablated) * 1e3 / LAYERS


def main():
    W, H = 1000, 360
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">',
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="16" y="26" font-size="16" font-weight="bold">GPU decode on one H200, synthetic Qwen3-30B-A3B, '
           'everything in VRAM</text>']
    # Left: per-op cost per layer.
    left, top, bar_h, scale = 230, 70, 24, 22.0  # px per µs
    out.append(f'<text x="16" y="{top - 16}" font-size="13" font-weight="bold">What each op costs in the graph, '
               f'µs per layer (run r2)</text>')
    y = top
    for name, tg in ABLATED:
        us = per_layer_us(tg)
        out.append(f'<text x="{left - 8}" y="{y + 15}" font-size="12" text-anchor="end">{name}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{us * scale:.1f}" height="{bar_h - 6}" fill="#2b6cb0"/>')
        out.append(f'<text x="{left + us * scale + 4:.1f}" y="{y + 14}" font-size="11">{us:.1f}</text>')
        y += bar_h
    out.append(f'<text x="{left - 8}" y="{y + 15}" font-size="12" text-anchor="end">one empty launch</text>')
    out.append(f'<rect x="{left}" y="{y}" width="{EXTRA_LAUNCH_US * scale:.1f}" height="{bar_h - 6}" fill="#a0aec0"/>')
    out.append(f'<text x="{left + EXTRA_LAUNCH_US * scale + 4:.1f}" y="{y + 14}" font-size="11">{EXTRA_LAUNCH_US}</text>')
    # Right: after / before ratios, a line at 1.
    x0, top2, span = 840, 70, 85.0  # px for a ratio difference of 0.1
    out.append(f'<text x="560" y="{top2 - 16}" font-size="13" font-weight="bold">After / before, same run</text>')
    one = x0
    y = top2
    for label, r in RATIOS:
        w = (r - 1.0) * span * 10
        x = one if w >= 0 else one + w
        color = "#2f855a" if r >= 1 else "#c53030"
        out.append(f'<text x="{one - 100}" y="{y + 15}" font-size="12" text-anchor="end">{label}</text>')
        out.append(f'<rect x="{x:.1f}" y="{y}" width="{abs(w):.1f}" height="{bar_h - 6}" fill="{color}"/>')
        out.append(f'<text x="{one + max(w, 0) + 4:.1f}" y="{y + 14}" font-size="11">{r:.3f}</text>')
        y += bar_h
    out.append(f'<line x1="{one}" x2="{one}" y1="{top2 - 4}" y2="{y}" stroke="black"/>')
    out.append("</svg>")
    with open("chart.svg", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
