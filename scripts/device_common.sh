# Shared by the scripts/device_*.sh runs (sourced, not run): their arguments, `step` and the
# machine description. Every script starts with
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

describe_machine() {  # GPU, memory and cores, to OUT/machine.txt
  (env -u LD_LIBRARY_PATH nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; free -g; nproc) \
    > "$out/machine.txt" 2>&1
}

out=${1:?usage: OUT_DIR BIN_DIR TESTDATA [LAYERS (48)] ...}
bin=${2:?usage: OUT_DIR BIN_DIR TESTDATA [LAYERS (48)] ...}
data=${3:?usage: OUT_DIR BIN_DIR TESTDATA [LAYERS (48)] ...}
layers=${4:-48}
extra=("${@:5}")
mkdir -p "$out"
export STRATA_TESTDATA=$data
describe_machine
