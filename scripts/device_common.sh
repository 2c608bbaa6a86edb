# Shared by the scripts/device_*.sh runs (sourced, not run): their arguments, `step`, `bench`,
# `bench_env`, `synth_model`, `synth_flash` and the machine description. Every script starts with
#   source "$(dirname "$0")/device_common.sh" "$@"
# which reads OUT_DIR BIN_DIR TESTDATA [LAYERS (48)] into $out $bin $data $layers (and leaves
# further arguments in $extra), makes OUT_DIR, points the tests at TESTDATA and describes the
# machine into OUT_DIR/machine.txt.

step() {  # name timeout command...: runs it, logs to OUT/name.txt, one line to times.txt
  local name=$1 limit=$2; shift 2
  local t=$(date +%s)
  timeout "$limit" "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(( $(date +%s) - t )) s" | tee -a "$out/times.txt"
}

# `strata parity --device gpu` on every fixture of TESTDATA/models, logged to OUT/parity_NAME.txt;
# prints each one's verdict lines.
parity_fixtures() {
  for m in llama qwen3 qwen3moe mixtral gptoss qwen3next qwen35moe deepseek3; do
    step "parity_$m" 120 "$bin/strata" parity --device gpu -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
    grep -E "PASS|FAIL|error|nmse" "$out/parity_$m.txt" | head -4
  done
}

# `strata parity --device gpu --expert-slots 2` on the MoE fixtures (the CPU lane computes most
# experts), logged to OUT/parity_tiny_NAME.txt; prints failures.
tiered_parity_fixtures() {
  for m in qwen3moe deepseek3 gptoss qwen35moe; do
    step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
    grep -E "FAIL|error" "$out/parity_tiny_$m.txt" | head -4
  done
}

# `strata parity --device cpu` on every fixture, logged to OUT/parity_cpu_NAME.txt; prints failures.
cpu_parity_fixtures() {
  for m in llama qwen3 qwen3moe mixtral gptoss qwen3next qwen35moe deepseek3; do
    step "parity_cpu_$m" 120 "$bin/strata" parity --device cpu -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
    grep -E "FAIL|error" "$out/parity_cpu_$m.txt" | head -4
  done
}

# strata bench -m "$model" with $bench_device (default --device gpu; a script that picks GPUs per
# run empties it) and ARGS, logged to OUT/bench_NAME.txt; prints its result lines.
bench_device=(--device gpu)
bench() {  # name args...
  local name=$1; shift
  step "bench_$name" 300 "$bin/strata" bench -m "$model" "${bench_device[@]}" "$@"
  grep -E "placement|GPU [0-9].*layers|expert tiers|pp|tg|experts:" "$out/bench_$name.txt" | head -16
}

# strata bench -m "$model" ARGS (flags in full, --device included), logged to OUT/NAME.txt; prints
# its result and tier lines on one line (for A/B rounds: one call per variant and round).
bench_line() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}

# `strata bench -m "$model" --device gpu ARGS` with environment switches, for A/B rounds of the
# expert tiers: logged to OUT/NAME.txt; prints its result, tier and chain lines on one line.
bench_env() {  # name [VAR=value...] -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -8 | tr '\n' ' ')"
}

# The BENCHMARKS.md synthetic Qwen3-30B-A3B with $layers layers into $model (extra synth flags after).
synth_model() {
  step synth 300 "$bin/strata" synth --preset qwen3-30b-a3b --layers "$layers" \
    --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" -o "$model" "$@"
}

# The synthetic Qwen3.8-Flash-Next (Q2_0 mix, n-gram table cut to 20,000,000 rows: 1.8 GB instead
# of 28.8 GB, for a 64 GiB disk) into $model, its first shard; synth flags after (--layers N).
# With FLASH_GGUF naming an existing first shard, that file is used (and drop_flash keeps it), so
# that several scripts in one machine session write the ~40 GB file once.
synth_flash() {
  if [[ -n ${FLASH_GGUF:-} && -f $FLASH_GGUF ]]; then
    model=$FLASH_GGUF
    echo "using $model"
    return
  fi
  model=${TMPDIR:-/tmp}/flash.gguf
  step synth 600 "$bin/strata" synth --preset qwen3.8-flash-next --mix q2_0 --ple-rows 20000000 -o "$model" "$@"
  tail -2 "$out/synth.txt"
  model=${model%.gguf}-00001-of-00002.gguf
}
drop_flash() {  # removes what synth_flash wrote, not a FLASH_GGUF file
  if [[ $model != "${FLASH_GGUF:-}" ]]; then rm -f "${model%-00001-of-00002.gguf}"-0000*; fi
}

# `strata serve -m $model --device gpu [ARGS]` with 16 slots, then `strata loadgen` with 1, 4 and
# 16 concurrent clients against it, logged as OUT/serve_NAME.txt and OUT/serve_load_NAME.txt.
serve_load() {  # name [serve args...]
  local name=$1; shift
  printf '%s' '{% for m in messages %}<{{ m.role }}>{{ m.content }}
{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}' > /tmp/strata-template.jinja
  "$bin/strata" serve -m "$model" --device gpu --chat-template /tmp/strata-template.jinja --port 0 --slots 16 \
    --ctx-size 1024 "$@" > "$out/serve_$name.txt" 2>&1 &
  local serve_pid=$! port=""
  for _ in $(seq 1 1200); do
    port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$out/serve_$name.txt" | tail -1)
    [[ -n "$port" ]] && grep -q "ready in" "$out/serve_$name.txt" && break
    sleep 0.1
  done
  step "serve_load_$name" 300 "$bin/strata" loadgen --url "http://127.0.0.1:$port" --clients 1,4,16 \
    --requests-per-client 4 --max-tokens 64
  cat "$out/serve_load_$name.txt"
  kill "$serve_pid"; wait "$serve_pid" 2> /dev/null
}

describe_machine() {  # GPU, memory, cores and their caches, to OUT/machine.txt
  (env -u LD_LIBRARY_PATH nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; free -g; nproc
   lscpu | grep -E '^(Model name|Socket|Core|Thread|NUMA node\(s\)|L1d|L2|L3)') > "$out/machine.txt" 2>&1
}

out=${1:?usage: OUT_DIR BIN_DIR TESTDATA [LAYERS (48)] ...}
bin=${2:?usage: OUT_DIR BIN_DIR TESTDATA [LAYERS (48)] ...}
data=${3:?usage: OUT_DIR BIN_DIR TESTDATA [LAYERS (48)] ...}
layers=${4:-48}
extra=("${@:5}")
mkdir -p "$out"
export STRATA_TESTDATA=$data
describe_machine
