#!/usr/bin/env python3
"""Draws chart.svg from the numbers in README.md (raw logs in raw/ and local_prompts.txt): CPU
prompts with this session's CPU work against the code before it (16af3ec), alternated within one
start of each machine."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../scripts"))
from ab_chart import draw  # noqa: E402

PANELS = [
    ("CPU pp512, 8-layer synthetic Qwen3-30B-A3B, 16 Xeon threads (tok/s)", None, (500.0, 1000.0, 100), [
        ("cpu.sh (without the longest-first items)", [("before", [711.44, 681.70, 627.37]),
                                                      ("after", [801.23, 837.74, 820.88])]),
        ("cpu2.sh (all of it)", [("before", [708.34, 666.14, 690.45]), ("after", [920.02, 937.78, 951.42])]),
    ]),
    ("CPU pp4096 (-b 4096), same model, 16 Xeon threads (tok/s)", None, (0.0, 500.0, 100), [
        ("cpu2.sh", [("before", [219.63]), ("after", [407.04])]),
    ]),
    ("CPU pp512, same model, 2 Zen 3 cores (tok/s)", None, (80.0, 140.0, 10), [
        ("local_prompts.txt", [("before", [100.95, 98.15, 98.51]), ("after", [128.49, 111.84, 113.45])]),
    ]),
]

if __name__ == "__main__":
    draw(os.path.join(os.path.dirname(os.path.abspath(__file__)), "chart.svg"), PANELS)
