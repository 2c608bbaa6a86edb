#!/usr/bin/env python3
"""Draws chart.svg from raw/bench/ (bench.sh's logs): each scenario before the reshape (ab44ddb)
and after it, bars the mean of the two rounds, dots the rounds, the dashed line the README's
figure for the scenario."""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "../../../scripts"))
from ab_chart import draw  # noqa: E402

# scenario log name, test, README figure, axis (lo, hi, step)
PANELS = [
    ("vram", "pp512", "everything in VRAM, pp512", 9850, (9000, 10200, 200)),
    ("vram", "tg128", "everything in VRAM, tg128", 362, (300, 380, 20)),
    ("vram4096", "pp4096", "everything in VRAM, pp4096", 14263, (13000, 14600, 400)),
    ("b10", "pp512", "a 10 GiB budget, pp512", 3095, (2600, 3400, 200)),
    ("b10", "tg128", "a 10 GiB budget, tg128", 145, (100, 160, 10)),
    ("ram", "pp512", "every expert in RAM, pp512", 1747, (1400, 1800, 100)),
    ("ram", "tg128", "every expert in RAM, tg128", 92.0, (70, 100, 10)),
]


def rate(name, test):
    with open(os.path.join(here, "raw/bench", name + ".txt")) as f:
        for line in f:
            m = re.match(r"\|\s*" + test + r"\s*\|\s*([0-9.]+)", line)
            if m:
                return float(m.group(1))
    raise SystemExit(f"{name}: no {test} row")


def main():
    panels = []
    for scenario, test, title, readme, axis in PANELS:
        variants = []
        for which, label in (("old", "before (ab44ddb)"), ("new", "after")):
            variants.append((label, [rate(f"{scenario}_{which}_r{r}", test) for r in (1, 2)]))
        panels.append((f"{title} (tok/s; dashed: the README)", readme, axis, [("bench.sh", variants)]))
    draw(os.path.join(here, "chart.svg"), panels)


if __name__ == "__main__":
    main()
