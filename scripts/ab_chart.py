#!/usr/bin/env python3
"""A/B bar charts for bench/results: panels of runs (one start of the machine each), each run's
variants as bars (the mean of its rounds) with a dot per round, and a dashed line where a panel
has a target. A results folder's chart.py lists its numbers and calls draw():

    import sys, os; sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
    from ab_chart import draw
    draw("chart.svg", [("pp512 (tok/s; target 1,670)", 1670, (1400, 1800, 100),
                        [("run.sh", [("before", [1600.1, 1610.2]), ("after", [1650.3, 1660.4])])])])
"""


def draw(path, panels, width=820, left=250):
    bar_h, gap = 16, 6
    y = 30
    body = []
    for title, target, (lo, hi, step), runs in panels:
        scale = (width - left - 70) / (hi - lo)
        body.append(f'<text x="10" y="{y}" font-weight="bold" font-size="13">{title}</text>')
        y += 12
        top = y
        for run, variants in runs:
            body.append(f'<text x="10" y="{y + 12}" fill="#555">{run}</text>')
            y += 16
            for label, rounds in variants:
                mean = sum(rounds) / len(rounds)
                bar = max(0.0, (mean - lo) * scale)
                body.append(f'<text x="{left - 8}" y="{y + 12}" text-anchor="end">{label}</text>')
                body.append(f'<rect x="{left}" y="{y}" width="{bar:.1f}" height="{bar_h}" fill="#4a7ab5"/>')
                for r in rounds:
                    body.append(f'<circle cx="{left + (r - lo) * scale:.1f}" cy="{y + bar_h / 2}" r="3" fill="#e07b39"/>')
                body.append(f'<text x="{left + bar + 6:.1f}" y="{y + 12}">{mean:,.2f}</text>')
                y += bar_h + gap
        if target is not None:
            tx = left + (target - lo) * scale
            body.append(f'<line x1="{tx:.1f}" y1="{top}" x2="{tx:.1f}" y2="{y}" stroke="#c33" stroke-dasharray="4,3"/>')
        body.append(f'<line x1="{left}" y1="{y}" x2="{width - 70}" y2="{y}" stroke="#333"/>')
        t = lo
        while t <= hi + 1e-9:
            x = left + (t - lo) * scale
            body.append(f'<text x="{x:.1f}" y="{y + 14}" text-anchor="middle" font-size="10">{t:g}</text>')
            t += step
        y += 40
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{y}" fill="white"/>', *body, '</svg>']
    with open(path, "w") as f:
        f.write("\n".join(svg) + "\n")
