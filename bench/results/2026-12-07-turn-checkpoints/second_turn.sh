#!/usr/bin/env bash
# Issue 36, turn checkpoints: how much sooner an agent's second turn starts than its first on a
# hybrid model on the GPU (target: >= 20x at a ~30K-token prompt). The synthetic Qwen3.8-Flash-Next
# (qwen4exp: DeltaNet, QSA attention, the PLE block; Q2_0 mix, 16 blocks, n-gram table cut to
# 20,000,000 rows) served on the GPU with 2 slots; turn 1 is a ~30K-token system prompt and a
# question, turn 2 repeats it with the reply rewritten (as agents send it back: the prompt diverges
# inside the reply) and a new question. Each request asks for one token, so its time is the time
# to the first token. The same turn 2 against a server without checkpoints (--checkpoint-ram 0)
# shows what a full re-read costs. Results: OUT/turns.txt (prompt_ms, cached tokens, curl seconds).
# Usage (repo root on the device): bench/results/2026-12-07-turn-checkpoints/second_turn.sh OUT BIN TESTDATA
# FLASH_GGUF: an already synthesized Qwen3.8-Flash-Next (its first shard; any depth) to use and keep instead.
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
synth_flash --layers 16
printf '%s' '{% for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}' > "$out/template.jinja"

# ~30K tokens of words (the synthetic vocabulary has a token per byte for such text: 30,000 bytes).
words() {  # seed: ~30,000 bytes of words
  awk -v seed="$1" 'BEGIN { srand(seed); w = "the a file code test build run read write tool call agent model state turn cache"; n = split(w, ws, " ");
    s = ""; while (length(s) < 30000) s = s ws[int(rand() * n) + 1] " "; printf "%s", s }'
}
system=$(words 7)
other=$(words 8)  # the warm-up's: it shares no turn with the measured conversation
warmup="{\"model\":\"m\",\"max_tokens\":1,\"temperature\":0,\"messages\":[{\"role\":\"system\",\"content\":\"$other\"},{\"role\":\"user\",\"content\":\"Hi.\"}]}"
printf '%s' "$warmup" > "$out/warmup.json"
turn1="{\"model\":\"m\",\"max_tokens\":1,\"temperature\":0,\"messages\":[{\"role\":\"system\",\"content\":\"$system\"},{\"role\":\"user\",\"content\":\"List the files.\"}]}"
turn2="{\"model\":\"m\",\"max_tokens\":1,\"temperature\":0,\"messages\":[{\"role\":\"system\",\"content\":\"$system\"},{\"role\":\"user\",\"content\":\"List the files.\"},{\"role\":\"assistant\",\"content\":\"main.cpp and util.cpp.\"},{\"role\":\"user\",\"content\":\"Open main.cpp.\"}]}"
printf '%s' "$turn1" > "$out/turn1.json"
printf '%s' "$turn2" > "$out/turn2.json"

serve() {  # name checkpoint_mib: starts the server, sets $port and $serve_pid
  "$bin/strata" serve -m "$model" --device gpu --chat-template "$out/template.jinja" --port 0 --slots 2 \
    --ctx-size 33000 --checkpoint-ram "$2" > "$out/serve_$1.txt" 2>&1 &
  serve_pid=$! port=""
  for _ in $(seq 1 3000); do
    port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$out/serve_$1.txt" | tail -1)
    [[ -n "$port" ]] && grep -q "ready in" "$out/serve_$1.txt" && break
    sleep 0.1
  done
}
ask() {  # label file: one request, one line of turns.txt
  local t
  t=$(curl -s -o "$out/$1.out.json" -w '%{time_total}' -H 'Content-Type: application/json' \
    --data-binary "@$out/$2" "http://127.0.0.1:$port/v1/chat/completions")
  echo "$1: curl ${t} s, $(grep -o '"prompt_tokens":[0-9]*\|"cached_tokens":[0-9]*\|"prompt_ms":[0-9.]*' "$out/$1.out.json" | tr '\n' ' ')" |
    tee -a "$out/turns.txt"
}

serve checkpoints 8192
ask warmup warmup.json  # first use of the GPU kernels and the n-gram table, not timed for the verdict
ask turn1 turn1.json
ask turn2 turn2.json
curl -s "http://127.0.0.1:$port/metrics" | grep -E "^strata_(checkpoint|prompt_tokens)" > "$out/metrics_checkpoints.txt"
kill "$serve_pid"; wait "$serve_pid" 2> /dev/null
serve reread 0
ask warmup_reread warmup.json
ask turn2_reread turn2.json
kill "$serve_pid"; wait "$serve_pid" 2> /dev/null
cat "$out/metrics_checkpoints.txt"
drop_flash
