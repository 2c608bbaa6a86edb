#!/usr/bin/env python3
"""Draws chart.svg from the numbers in README.md (raw logs in raw/): tg128 with every expert in
RAM for each bias of the decode split's feedback, round by round, in the two runs that compared
them (bias.sh and final.sh; each run one start of the machine, variants alternated)."""

RUNS = [
    ("bias.sh (a slow start)", [("1", [62.96, 64.46, 64.27]), ("0.5", [66.42, 63.83, 64.90]),
                                ("2", [66.50, 65.78, 66.83]), ("3", [69.15, 64.81, 69.25])]),
    ("final.sh", [("1", [76.92, 71.98, 74.73]), ("3 (default)", [76.65, 75.30, 77.41]),
                  ("5", [74.81, 75.77, 75.48]), ("8", [74.05, 73.72, 76.54])]),
]


def main():
    W, H, top, left, bar_h, gap = 760, 330, 40, 170, 18, 8
    lo, hi = 60.0, 80.0
    scale = (W - left - 60) / (hi - lo)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">tg128, every expert in RAM: the decode split\'s '
           'bias (step towards the CPU ÷ step away)</text>']
    y = top
    for title, variants in RUNS:
        out.append(f'<text x="10" y="{y + 12}" font-weight="bold">{title}</text>')
        y += 20
        for label, rounds in variants:
            mean = sum(rounds) / len(rounds)
            width = (mean - lo) * scale
            out.append(f'<text x="{left - 8}" y="{y + 13}" text-anchor="end">bias {label}</text>')
            out.append(f'<rect x="{left}" y="{y}" width="{width:.1f}" height="{bar_h}" fill="#4a7ab5"/>')
            for r in rounds:
                x = left + (r - lo) * scale
                out.append(f'<circle cx="{x:.1f}" cy="{y + bar_h / 2}" r="3" fill="#e07b39"/>')
            out.append(f'<text x="{left + width + 6:.1f}" y="{y + 13}">{mean:.1f}</text>')
            y += bar_h + gap
        y += 10
    axis_y = y
    out.append(f'<line x1="{left}" y1="{axis_y}" x2="{W - 60}" y2="{axis_y}" stroke="#333"/>')
    for t in range(int(lo), int(hi) + 1, 5):
        x = left + (t - lo) * scale
        out.append(f'<line x1="{x}" y1="{axis_y}" x2="{x}" y2="{axis_y + 4}" stroke="#333"/>')
        out.append(f'<text x="{x}" y="{axis_y + 16}" text-anchor="middle">{t}</text>')
    out.append(f'<text x="{W / 2}" y="{axis_y + 32}" text-anchor="middle">tok/s (bars: mean of 3 rounds, '
               'dots: rounds; the axis starts at 60)</text>')
    out.append('</svg>')
    with open("chart.svg", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
