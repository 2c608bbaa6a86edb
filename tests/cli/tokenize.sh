#!/usr/bin/env bash
# End-to-end: `strata tokenize` / `strata detokenize` against llama.cpp's reference tokenizations
# (testdata/vocab/*.inp/.out, see testdata/PROVENANCE.md). Usage: tokenize.sh <strata> <testdata-root>
set -euo pipefail
strata=$1
vocab_dir=$2/vocab
if [[ ! -f $vocab_dir/ggml-vocab-llama-spm.gguf ]]; then
  echo "SKIP: test data missing ($vocab_dir)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# Test string number $2 (1-based) of a vocab's .inp, written to a file byte for byte.
input_string() {
  awk -v RS='\n__ggml_vocab_test__\n' -v n="$2" 'NR == n { printf "%s", $0 }' "$vocab_dir/ggml-vocab-$1.gguf.inp"
}
# The expected ids of that string, comma-separated.
expected_ids() {
  sed -n "$2p" "$vocab_dir/ggml-vocab-$1.gguf.out" | tr -d '\r' | sed 's/^ //; s/ /,/g'
}

for vocab in llama-spm gpt-2 deepseek-llm bert-bge; do
  for n in 12 33 46; do   # "Hello world", the mixed-script line, the long text with whitespace runs
    input_string "$vocab" "$n" > "$work/in.txt"
    want=$(expected_ids "$vocab" "$n")
    got=$("$strata" tokenize --model "$vocab_dir/ggml-vocab-$vocab.gguf" --file "$work/in.txt" --ids 2>/dev/null)
    [[ $got == "$want" ]] || fail "$vocab string $n: expected '$want', got '$got'"
  done
done

model=$vocab_dir/ggml-vocab-llama-spm.gguf
# --text, --bos, and the default id<TAB>piece listing.
[[ $("$strata" tokenize -m "$model" --text "Hello world" --ids --bos) == "1,15043,3186" ]] || fail "--bos"
[[ $("$strata" tokenize -m "$model" --text "Hello world") == $'15043\t Hello\n3186\t world' ]] || fail "listing"
# Control-token text is plain text unless --special.
[[ $("$strata" tokenize -m "$model" --text "<s>" --ids --special) == "1" ]] || fail "--special"
[[ $("$strata" tokenize -m "$model" --text "<s>" --ids) != "1" ]] || fail "<s> parsed without --special"
# detokenize restores the text; BOS is shown only with --special.
[[ $("$strata" detokenize -m "$model" --ids 1,15043,3186) == "Hello world" ]] || fail "detokenize"
[[ $("$strata" detokenize -m "$model" --ids 1,15043,3186 --special) == "<s> Hello world" ]] || fail "detokenize --special"
input_string gpt-2 46 > "$work/long.txt"
ids=$("$strata" tokenize -m "$vocab_dir/ggml-vocab-gpt-2.gguf" --file "$work/long.txt" --ids)
"$strata" detokenize -m "$vocab_dir/ggml-vocab-gpt-2.gguf" --ids "$ids" > "$work/back.txt"
printf '\n' >> "$work/long.txt"   # detokenize ends its output with one newline
cmp -s "$work/long.txt" "$work/back.txt" || fail "gpt-2 round trip of the long text"
# Bad input is an error with a message, not a crash.
if "$strata" detokenize -m "$model" --ids 1,x 2> "$work/err.txt"; then fail "accepted a bad id"; fi
grep -q -- "--ids" "$work/err.txt" || fail "bad id message: $(cat "$work/err.txt")"
if "$strata" tokenize -m "$work/missing.gguf" --text hi 2> /dev/null; then fail "accepted a missing model"; fi
echo "PASS"
