#!/usr/bin/env python3
# The numbers of README.md (raw/*.txt), drawn: strata and llama.cpp alternated, two rounds, each
# round's mean of 2 repetitions as a dot.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
from ab_chart import draw  # noqa: E402

draw(os.path.join(os.path.dirname(__file__), "chart.svg"), [
    ("pp64 (tok/s, synthetic DeepSeek-V4-Flash ds4-q2, 6 blocks, 2 threads)", None, (0, 35, 5),
     [("2 rounds, alternated", [("llama.cpp d32676d", [29.78, 25.44]), ("strata", [9.12, 12.13])])]),
    ("tg16 (tok/s)", None, (0, 20, 5),
     [("2 rounds, alternated", [("llama.cpp d32676d", [15.27, 14.80]), ("strata", [6.96, 9.75])])]),
])
