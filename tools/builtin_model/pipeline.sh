#!/usr/bin/env bash
# The built-in model's pipeline around the GPU step (README.md beside this file explains each step).
#   pipeline.sh data            text, tokenizer, vocabulary GGUF and token ids -> device-data/builtin/
#   pipeline.sh ship CKPT_DIR   checkpoint -> models/strata-kjv-moe.gguf (Q8_0), plus an F16
#                               one (the float16 checkpoint exactly) and both held-out perplexities
# STRATA: the strata binary to use (default build/bin/strata).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
strata=${STRATA:-$root/build/bin/strata}
data=$root/device-data/builtin
[[ -x $strata ]] || { echo "pipeline: $strata not found: build Strata first (or set STRATA)" >&2; exit 1; }

case ${1:-} in
  data)
    bash "$here/prepare_text.sh" "$data"
    python3 "$here/train_tokenizer.py" "$data/train.txt" "$data/tokenizer.json"
    "$strata" convert --tokenizer "$data/tokenizer.json" -o "$data/vocab.gguf"
    # Training sees exactly the ids Strata's tokenizer gives; chat.txt spells its special tokens.
    for f in train valid heldout; do
      "$strata" tokenize -m "$data/vocab.gguf" --file "$data/$f.txt" --ids > "$data/$f.ids"
    done
    "$strata" tokenize -m "$data/vocab.gguf" --file "$data/chat.txt" --ids --special > "$data/chat.ids"
    du -sh "$data"
    ;;
  ship)
    ckpt=${2:?usage: pipeline.sh ship CKPT_DIR}
    shards=()
    for f in "$ckpt"/*.safetensors; do shards+=(--checkpoint "$f"); done
    for type in q8_0 f16; do
      "$strata" convert --tokenizer "$data/tokenizer.json" --config "$ckpt/config.json" "${shards[@]}" \
        --type "$type" -o "$data/strata-kjv-moe-$type.gguf"
      echo "$type: $("$strata" perplexity -m "$data/strata-kjv-moe-$type.gguf" -f "$data/heldout.txt" --ctx 512 2> /dev/null)"
    done
    mkdir -p "$root/models"
    cp "$data/strata-kjv-moe-q8_0.gguf" "$root/models/strata-kjv-moe.gguf"
    ls -l "$root/models/strata-kjv-moe.gguf"
    ;;
  *)
    sed -n 2,6p "$0" >&2
    exit 1
    ;;
esac
