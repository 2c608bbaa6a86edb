#!/usr/bin/env python3
"""Draws chart.svg from the numbers in README.md (raw logs in raw/): decode's signals between the
host and the GPU as tagged words against the flag and counter (STRATA_TIERS_TAGGED=0), alternated
within one start (tagged.sh), the signal latencies of the scratch program, and the copies ahead
balanced from measured costs against fixed counts (ahead.sh)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../scripts"))
from ab_chart import draw  # noqa: E402

PANELS = [
    ("A signal's round trip, host -> waiting kernel -> host, while a copy engine streams (us)", None,
     (0.0, 16.0, 2), [
        ("scratch/signal_latency.cu", [("flag", [4.41]), ("flag + fence", [7.88]), ("flag + read 8 KB", [12.04]),
                                       ("flag + read 8 KB + fence (the old chain)", [15.81]),
                                       ("tagged 8 KB", [8.44]), ("tagged 8 KB + fence", [11.88])]),
    ]),
    ("Every expert in RAM: lane end -> next routing (ms a token)", None, (2.5, 3.5, 0.25), [
        ("tagged.sh", [("flag and counter", [3.22, 3.09, 3.10]), ("tagged words", [2.96, 2.95, 2.95])]),
    ]),
    ("Every expert in RAM, tg128 (tok/s; target 90)", 90, (80.0, 100.0, 5), [
        ("tagged.sh", [("flag and counter", [90.19, 93.37, 91.58]), ("tagged words", [92.27, 90.87, 92.71])]),
    ]),
    ("10 GiB budget, tg128 (tok/s; target 117)", 117, (100.0, 145.0, 5), [
        ("tagged.sh", [("flag and counter", [117.69, 119.07, 117.63]), ("tagged words", [119.51, 117.28, 119.39])]),
        ("ahead.sh", [("3 copied ahead (before)", [114.08, 116.24]), ("2 copied ahead", [131.42, 140.28]),
                      ("balanced (copies_ahead.h)", [132.45, 134.15])]),
    ]),
    ("16 GiB budget, tg128 (tok/s)", None, (150.0, 190.0, 10), [
        ("ahead.sh", [("3 copied ahead (before)", [165.03, 168.95]), ("2 copied ahead", [170.99, 170.88]),
                      ("balanced (copies_ahead.h)", [175.16, 185.90])]),
    ]),
]

if __name__ == "__main__":
    draw(os.path.join(os.path.dirname(os.path.abspath(__file__)), "chart.svg"), PANELS)
