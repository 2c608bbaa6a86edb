#!/usr/bin/env bash
# `strata synth --preset qwen3.8-flash-next`, cut small (4 blocks: 3 DeltaNet and 1 QSA, the PLE
# block, 16 experts, a 4,096-row PLE table, 1,024 tokens; ~300 MB): the two shards and the MTP
# sidecar are written, `strata inspect` lists the model with the table in the second shard, and
# `strata run` decodes 4 tokens on the CPU. The shards' sizes are printed for the record.
set -euo pipefail
strata="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$strata" synth --preset qwen3.8-flash-next --mix q2_0 --layers 4 --experts 16 --ple-rows 4096 \
  --vocab-size 1024 --mtp shared -o "$work/flash.gguf" 2>"$work/synth.err" \
  || { echo "synth failed:"; cat "$work/synth.err"; exit 1; }
for f in flash-00001-of-00002.gguf flash-00002-of-00002.gguf flash-mtp.gguf; do
  [[ -s "$work/$f" ]] || { echo "synth did not write $f"; cat "$work/synth.err"; exit 1; }
done
ls -l "$work"/*.gguf | awk '{print $5, $NF}' | sed "s|$work/||"
# Shard 2 is the table alone: 192 header bytes + 4,096 rows of 160 IQ4_NL values (90 bytes).
size2=$(stat -c %s "$work/flash-00002-of-00002.gguf")
[[ "$size2" -le $((192 + 4096 * 90)) ]] || { echo "shard 2 holds more than the table: $size2 bytes"; exit 1; }

"$strata" inspect "$work/flash-00001-of-00002.gguf" >"$work/inspect.out" \
  || { echo "inspect failed"; cat "$work/inspect.out"; exit 1; }
grep -q "architecture  qwen4exp" "$work/inspect.out" || { echo "inspect: no qwen4exp"; exit 1; }
grep -q "(+1 more parts)" "$work/inspect.out" || { echo "inspect: the second shard was not joined"; exit 1; }
grep -q "per_layer_token_embd.weight" "$work/inspect.out" || { echo "inspect: no PLE table"; exit 1; }
grep -q "16 experts per layer, 10 used per token" "$work/inspect.out" || { echo "inspect: wrong MoE summary"; exit 1; }

"$strata" run -m "$work/flash-00001-of-00002.gguf" -p "hello" -n 4 --device cpu >"$work/run.out" 2>&1 \
  || { echo "run failed:"; cat "$work/run.out"; exit 1; }
grep -q "generated 4 tokens" "$work/run.out" || { echo "run: not 4 tokens"; cat "$work/run.out"; exit 1; }

# A cut below what 16 primes need is refused with the flag named.
if "$strata" synth --preset qwen3.8-flash-next --ple-rows 100 -o "$work/bad.gguf" 2>"$work/bad.err"; then
  echo "--ple-rows 100 was accepted"; exit 1
fi
grep -q -- "--ple-rows" "$work/bad.err" || { echo "unclear message:"; cat "$work/bad.err"; exit 1; }
echo "synth_qwen4exp: ok"
