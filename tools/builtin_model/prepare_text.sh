#!/usr/bin/env bash
# Step 1 of the built-in model (see README.md beside this file): the King James Bible as plain
# text, one verse per line ("Genesis 1:1 In the beginning God created ..."), split by chapter into
# a training set, a validation set (early stopping) and a held-out set (the perplexity evidence),
# plus chat-formatted examples drawn from the training verses only.
# Needs Debian's bible-kjv and bible-kjv-text (STRATA_SETUP_TRAINING=1 bash scripts/setup.sh).
# Usage: tools/builtin_model/prepare_text.sh [OUT_DIR]   (default: device-data/builtin)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../device-data/builtin}
mkdir -p "$out"
command -v bible > /dev/null || { echo "prepare_text: 'bible' not found: run STRATA_SETUP_TRAINING=1 bash scripts/setup.sh" >&2; exit 1; }

# `bible` prints each chapter as a blank line, a "Book N" heading, then verses as "  V text" wrapped
# over several lines; a heading is the first line after a blank one (continuation lines can look
# like headings otherwise).
bible "Gen1:1-Rev22:21" | awk '
  function flush() { if (verse != "") print book " " chapter ":" verse " " text; verse = "" }
  /^$/ { flush(); after_blank = 1; next }
  after_blank && /^[^ ]/ { chapter = $NF; $NF = ""; sub(/ +$/, ""); book = $0; after_blank = 0; next }
  { after_blank = 0 }
  /^  [0-9]+ / { flush(); verse = $1; $1 = ""; text = substr($0, 2); next }
  { text = text " " $0 }
  END { flush() }' > "$out/verses.txt"

n=$(wc -l < "$out/verses.txt")
[[ $n -eq 31102 ]] || { echo "prepare_text: expected 31102 verses, got $n" >&2; exit 1; }

# The split is by whole chapters, so held-out verses never share a chapter with training verses;
# Python's seeded generator makes it the same on every machine.
python3 - "$out" <<'PY'
import random, sys
out = sys.argv[1]
verses = open(f"{out}/verses.txt", encoding="ascii").read().splitlines()
def chapter_of(line):  # "1 Samuel 3:4 text" -> "1 Samuel 3"
    return line.split(":", 1)[0]
def reference_of(line):  # "1 Samuel 3:4 text" -> "1 Samuel 3:4"
    chapter, rest = line.split(":", 1)
    return chapter + ":" + rest.split(" ", 1)[0]
order = []
for v in verses:
    c = chapter_of(v)
    if not order or order[-1] != c:
        order.append(c)
rng = random.Random(1611)
shuffled = order[:]
rng.shuffle(shuffled)
n_heldout = round(0.02 * len(order))
n_valid = round(0.01 * len(order))
heldout = set(shuffled[:n_heldout])
valid = set(shuffled[n_heldout:n_heldout + n_valid])
sets = {"train": [], "valid": [], "heldout": []}
for v in verses:
    c = chapter_of(v)
    sets["heldout" if c in heldout else "valid" if c in valid else "train"].append(v)
for name, lines in sets.items():
    with open(f"{out}/{name}.txt", "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")

# Chat examples: a user names a verse, the assistant quotes it and the verse after it. Only
# training verses appear, so held-out text stays unseen.
train = sets["train"]
pick = random.Random(1769)
with open(f"{out}/chat.txt", "w", encoding="ascii") as f:
    for i in range(len(train) - 1):
        if pick.random() >= 0.25 or chapter_of(train[i]) != chapter_of(train[i + 1]):
            continue
        f.write(f"<|user|>\n{reference_of(train[i])}\n"
                f"<|assistant|>\n{train[i]}\n{train[i + 1]}<|endoftext|>")
print(f"prepare_text: {len(order)} chapters; train {len(train)} verses, valid {len(sets['valid'])}, "
      f"held-out {len(sets['heldout'])} ({n_heldout} chapters)")
PY
wc -c "$out"/{train,valid,heldout,chat}.txt
