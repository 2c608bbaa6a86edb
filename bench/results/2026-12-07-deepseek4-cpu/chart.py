#!/usr/bin/env python3
# The numbers of README.md (raw/*.txt), drawn: strata and llama.cpp alternated, two rounds each
# before and after the F16 kernel, each round's mean of 2 repetitions as a dot.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
from ab_chart import draw  # noqa: E402

draw(os.path.join(os.path.dirname(__file__), "chart.svg"), [
    ("pp64 (tok/s, synthetic DeepSeek-V4-Flash ds4-q2, 6 blocks, 2 threads)", None, (0, 35, 5),
     [("before (e1a1494)", [("llama.cpp d32676d", [29.78, 25.44]), ("strata", [9.12, 12.13])]),
      ("after: F16 dot with avx2 (86c9b47)", [("llama.cpp d32676d", [25.19, 29.06]), ("strata", [26.39, 26.26])])]),
    ("tg16 (tok/s)", None, (0, 25, 5),
     [("before (e1a1494)", [("llama.cpp d32676d", [15.27, 14.80]), ("strata", [6.96, 9.75])]),
      ("after: F16 dot with avx2 (86c9b47)", [("llama.cpp d32676d", [13.87, 15.44]), ("strata", [19.06, 18.77])])]),
])
