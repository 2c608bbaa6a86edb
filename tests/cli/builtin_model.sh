#!/usr/bin/env bash
# End-to-end: the built-in model (models/strata-kjv-moe.gguf, made by tools/builtin_model/) loads,
# its tokenizer round-trips text, and `strata run` — the command scripts/run.sh shows a newcomer —
# writes readable King James English, plain and through the chat template.
# Usage: builtin_model.sh <strata> <testdata-root>   (the model is found from this script's place)
set -euo pipefail
strata=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/models/strata-kjv-moe.gguf
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -f $model ]] || fail "the built-in model is missing: $model (see tools/builtin_model/README.md)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Readable: at least 90% of the characters are letters, spaces or ordinary punctuation, and the
# text uses the words any page of the KJV is full of.
check_readable() {
  local name=$1 file=$2
  local total good
  total=$(wc -c < "$file")
  good=$(tr -cd "A-Za-z ,.;:'?!\n" < "$file" | wc -c)
  (( total >= 80 )) || fail "$name: only $total bytes of output: $(cat "$file")"
  (( good * 10 >= total * 9 )) || fail "$name: not readable text ($good of $total plain characters): $(cat "$file")"
  local hits=0
  for w in the and of unto LORD God shall his that; do
    grep -qw "$w" "$file" && hits=$((hits + 1))
  done
  (( hits >= 3 )) || fail "$name: only $hits of the common KJV words: $(cat "$file")"
}

# Plain continuation; greedy and seeded sampling both.
"$strata" run -m "$model" -p "And God said" -n 60 --temp 0 > "$work/greedy.txt" 2> "$work/err.txt" ||
  fail "strata run: $(cat "$work/err.txt")"
check_readable "greedy" "$work/greedy.txt"
"$strata" run -m "$model" -p "The LORD is my shepherd" -n 60 --temp 0.8 --seed 7 > "$work/sampled.txt" 2> /dev/null
check_readable "sampled" "$work/sampled.txt"
# The chat template: a verse reference in, the verse out (the format it was trained on).
"$strata" run -m "$model" --chat -p "Genesis 1:3" -n 80 --temp 0 > "$work/chat.txt" 2> "$work/err.txt" ||
  fail "strata run --chat: $(cat "$work/err.txt")"
check_readable "chat" "$work/chat.txt"
grep -q "Genesis 1:" "$work/chat.txt" || fail "chat: expected the answer to quote Genesis 1, got: $(cat "$work/chat.txt")"

# The tokenizer round-trips text, and the special tokens exist as single control tokens.
verse="Genesis 1:1 In the beginning God created the heaven and the earth."
ids=$("$strata" tokenize -m "$model" --text "$verse" --ids)
[[ $("$strata" detokenize -m "$model" --ids "$ids") == "$verse" ]] || fail "tokenizer round trip of: $verse"
[[ $("$strata" tokenize -m "$model" --text "<|user|>" --special --ids) =~ ^[0-9]+$ ]] || fail "<|user|> is not one token"

# A verse it was trained on is predicted far better than chance (perplexity 4096).
printf '%s\n' "$verse" "Genesis 1:2 And the earth was without form, and void; and darkness was upon the face of the deep." \
  "Genesis 1:3 And God said, Let there be light: and there was light." > "$work/known.txt"
ppl=$("$strata" perplexity -m "$model" -f "$work/known.txt" --json 2> /dev/null | sed 's/.*"perplexity": \([0-9.]*\).*/\1/')
awk -v p="$ppl" 'BEGIN { exit !(p > 1 && p < 20) }' || fail "perplexity on Genesis 1:1-3: expected below 20, got $ppl"
echo "PASS"
