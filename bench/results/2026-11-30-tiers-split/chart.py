#!/usr/bin/env python3
"""Draws chart.svg from the numbers in README.md (raw logs in raw/): the CPU matmul's tiles against
STRATA_CPU_TILES=0, alternated within one start of each machine."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../scripts"))
from ab_chart import draw  # noqa: E402

PANELS = [
    ("CPU pp512, 8-layer synthetic Qwen3-30B-A3B, 2 Zen 3 cores (tok/s)", None, (50.0, 100.0, 10), [
        ("local_tiles.txt", [("no tiles", [62.30, 62.59, 66.27]), ("tiles", [86.43, 82.93, 79.89])]),
    ]),
    ("CPU pp512, same model, 16 Xeon threads (tok/s)", None, (250.0, 350.0, 25), [
        ("tiles.sh", [("no tiles", [278.52, 275.65, 287.73]), ("tiles", [338.11, 313.09, 309.31])]),
    ]),
    ("GPU tiers pp512, every expert in RAM (tok/s; target 1,670)", 1670, (1550.0, 1700.0, 50), [
        ("tiles.sh", [("no tiles", [1635.04, 1628.13, 1603.12]), ("tiles", [1674.39, 1656.42, 1644.90])]),
    ]),
    ("GPU tiers pp512, 10 GiB budget (tok/s; target 2,535)", 2535, (2500.0, 3200.0, 100), [
        ("tiles.sh", [("no tiles", [2943.94, 3036.82]), ("tiles", [3133.10, 3063.82])]),
    ]),
    ("GPU tiers pp512, every expert in RAM: the first tokens through tiles too (tok/s; target 1,670)", 1670,
     (1550.0, 1750.0, 50), [
        ("stream.sh", [("tiles after the first token", [1659.59, 1661.05, 1645.01]),
                       ("tiles from the first token", [1691.12, 1679.55, 1703.45])]),
    ]),
    ("CPU pp512, 16 Xeon threads: attention's subnormal weights (tok/s)", None, (250.0, 650.0, 50), [
        ("attn.sh", [("every exp()", [295.83, 284.78]), ("weights under e^-50 zero", [598.77, 571.16])]),
    ]),
    ("CPU server, 8 clients, 2 Zen 3 cores: aggregate tok/s", None, (30.0, 55.0, 5), [
        ("local_serve.txt", [("no tiles", [38.7, 39.3]), ("tiles", [44.5, 47.0])]),
    ]),
]

if __name__ == "__main__":
    draw(os.path.join(os.path.dirname(os.path.abspath(__file__)), "chart.svg"), PANELS)
