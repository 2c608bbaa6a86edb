#!/usr/bin/env python3
"""Draws chart.svg from the numbers in README.md (raw logs in raw/): for each panel, each variant of
each run (variants alternated within one start of the machine; bars: means of the rounds, dots:
rounds), with the issue's target where there is one."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../scripts"))
from ab_chart import draw  # noqa: E402

PANELS = [
    ("tg128, every expert in RAM (tok/s; target 90)", 90, (60.0, 95.0, 5), [
        ("events.sh", [("both events (as before)", [78.40, 74.55, 77.46]), ("routing flag only", [81.75, 81.04, 71.56]),
                       ("step end moved only", [67.11, 62.23, 74.93]), ("no event in the chain", [83.71, 72.21, 79.38])]),
        ("final.sh", [("both events (as before)", [70.98, 75.70, 76.34]), ("no event in the chain", [75.06, 79.01, 80.78]),
                      ("... and no link clock", [76.96, 78.74, 77.97])]),
        ("final2.sh", [("previous behaviour", [83.58, 80.29, 80.54]), ("28ca13d", [84.81, 86.98, 83.15])]),
        ("last.sh", [("previous behaviour", [87.90, 87.89]), ("final code", [92.40, 91.69])]),
    ]),
    ("lane end → next routing, ms per token (lower is better)", None, (2.5, 4.5, 0.5), [
        ("events.sh", [("both events (as before)", [4.05, 4.17, 4.00]), ("routing flag only", [3.46, 3.50, 3.70]),
                       ("step end moved only", [3.72, 4.26, 3.87]), ("no event in the chain", [3.17, 3.36, 3.11])]),
        ("final.sh", [("both events (as before)", [4.20, 4.11, 4.17]), ("no event in the chain", [3.28, 3.24, 3.35])]),
        ("last.sh", [("previous behaviour", [3.83, 3.88]), ("final code", [3.14, 3.18])]),
    ]),
    ("CPU decode, 16 threads, 8 layers, tg64 (tok/s): prefetch window", None, (180.0, 260.0, 20), [
        ("explore.sh", [("2 KiB (as before)", [223.92, 201.42]), ("4 KiB", [238.83, 217.02]), ("8 KiB", [220.19, 211.20])]),
        ("final.sh", [("2 KiB (as before)", [237.19, 216.18, 219.18]), ("4 KiB", [245.80, 235.95, 232.93])]),
    ]),
]


if __name__ == "__main__":
    draw(os.path.join(os.path.dirname(os.path.abspath(__file__)), "chart.svg"), PANELS)
