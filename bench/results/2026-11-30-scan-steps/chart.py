#!/usr/bin/env python3
"""Draws chart.svg from the numbers in README.md (raw logs in raw/): pp512 with a 10 GiB budget and
with every expert in RAM, for each variant each run compared (variants alternated within one start
of the machine; bars: means of the rounds, dots: rounds), with the issue's targets."""

PANELS = [
    ("pp512, a 10 GiB budget (target 2,535)", 2535, [
        ("scan.sh", [("before (admits, no copies ahead)", [2279.90, 2269.07]), ("no admission in scans", [2563.74, 2537.58]),
                     ("+ copies ahead", [2483.45, 2523.57])]),
        ("plan.sh", [("plan copied (as before)", [2452.60, 2516.95]), ("plan through the mapping", [2971.21, 3074.92]),
                     ("... without the backlog", [2893.36, 2945.95])]),
        ("final.sh", [("final code", [3039.84])]),
    ]),
    ("pp512, every expert in RAM (target 1,670)", 1670, [
        ("lanesum.sh", [("lane sum copied (as before)", [1467.50, 1454.06]), ("lane sum through the mapping", [1554.95, 1553.52])]),
        ("plan.sh", [("plan copied", [1596.49, 1568.06]), ("plan through the mapping", [1605.88, 1679.64]),
                     ("... without the backlog", [1620.24, 1626.73])]),
        ("final.sh", [("final code", [1720.57])]),
    ]),
]


def main():
    W, left, bar_h, gap = 820, 250, 16, 6
    out, y = [], 30
    body = []
    for title, target, runs in PANELS:
        lo, hi = (2000.0, 3200.0) if target > 2000 else (1300.0, 1800.0)
        scale = (W - left - 70) / (hi - lo)
        body.append(f'<text x="10" y="{y}" font-weight="bold" font-size="13">{title}</text>')
        y += 12
        top = y
        for run, variants in runs:
            body.append(f'<text x="10" y="{y + 12}" fill="#555">{run}</text>')
            y += 16
            for label, rounds in variants:
                mean = sum(rounds) / len(rounds)
                width = (mean - lo) * scale
                body.append(f'<text x="{left - 8}" y="{y + 12}" text-anchor="end">{label}</text>')
                body.append(f'<rect x="{left}" y="{y}" width="{width:.1f}" height="{bar_h}" fill="#4a7ab5"/>')
                for r in rounds:
                    body.append(f'<circle cx="{left + (r - lo) * scale:.1f}" cy="{y + bar_h / 2}" r="3" fill="#e07b39"/>')
                body.append(f'<text x="{left + width + 6:.1f}" y="{y + 12}">{mean:,.0f}</text>')
                y += bar_h + gap
        tx = left + (target - lo) * scale
        body.append(f'<line x1="{tx:.1f}" y1="{top}" x2="{tx:.1f}" y2="{y}" stroke="#c33" stroke-dasharray="4,3"/>')
        body.append(f'<line x1="{left}" y1="{y}" x2="{W - 70}" y2="{y}" stroke="#333"/>')
        step = 200 if target > 2000 else 100
        for t in range(int(lo), int(hi) + 1, step):
            x = left + (t - lo) * scale
            body.append(f'<text x="{x:.1f}" y="{y + 14}" text-anchor="middle">{t:,}</text>')
        y += 40
    body.append(f'<text x="10" y="{y - 10}" fill="#555">tok/s; each axis starts above 0; dashed: the target; '
                'runs are separate starts of the machine</text>')
    out.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{y}" font-family="sans-serif" font-size="12">')
    out.append(f'<text x="{W / 2}" y="16" text-anchor="middle" font-size="14">Prompts with experts off the GPU: '
               'scan steps, and what the copy engine was holding up</text>')
    out += body
    out.append('</svg>')
    with open("chart.svg", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
