#!/usr/bin/env python3
"""Draws chart.svg: decode (tg64) with the expert tiers, each comparison measured within one device
run (A/B alternated), from the numbers in README.md. Bars are means over the rounds."""

# (group title, [(label, tok/s)], ...): same-run comparisons only
GROUPS = [
    ("All experts in RAM, run 2", [("previous code", 51.8), ("CPU lane on its own thread (first cut)", 56.6)]),
    ("All experts in RAM, run 4", [("previous code", 51.7), ("commit 6c4e4c4", 55.0)]),
    ("All experts in RAM, run 7", [("--expert-prefetch 0", 58.0), ("--expert-prefetch 1", 56.7), ("--expert-prefetch 2", 60.3)]),
    ("10 GiB budget, run 2", [("previous code", 99.0), ("CPU lane on its own thread (first cut)", 105.5)]),
    ("10 GiB budget, run 4", [("previous code", 97.4), ("commit 6c4e4c4", 101.0)]),
    ("10 GiB budget, skew 1.0, run 8", [("--expert-prefetch 0", 160.3), ("--expert-prefetch 2", 158.7)]),
]
TARGETS = {"All experts in RAM": 90, "10 GiB budget": 117}


def main():
    bar_h, gap, left, width = 18, 26, 330, 520
    rows = sum(len(g[1]) for g in GROUPS)
    height = 70 + rows * bar_h + len(GROUPS) * gap + 30
    top = 170.0
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" height="{height}" font-family="sans-serif">',
           f'<rect width="100%" height="100%" fill="white"/>',
           '<text x="16" y="26" font-size="16" font-weight="bold">Expert tiers, decode tg64 on one H200 (tok/s; '
           'each group from one run)</text>',
           '<text x="16" y="46" font-size="12">dashed red: the issue target for the scenario (90 all in RAM, 117 at 10 GiB)</text>']
    y = 70
    for title, bars in GROUPS:
        out.append(f'<text x="16" y="{y + 12}" font-size="13" font-weight="bold">{title}</text>')
        y += 18
        target = next((t for k, t in TARGETS.items() if title.startswith(k) and "skew" not in title), None)
        y0 = y
        for label, v in bars:
            w = width * v / top
            out.append(f'<text x="{left - 8}" y="{y + 13}" font-size="12" text-anchor="end">{label}</text>')
            out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h - 4}" fill="#2b6cb0"/>')
            out.append(f'<text x="{left + w + 4:.1f}" y="{y + 12}" font-size="11">{v:g}</text>')
            y += bar_h
        if target:
            tx = left + width * target / top
            out.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{y0 - 2}" y2="{y}" stroke="#c53030" stroke-width="2" '
                       'stroke-dasharray="5,3"/>')
        y += gap - 10
    out.append("</svg>")
    with open("chart.svg", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
