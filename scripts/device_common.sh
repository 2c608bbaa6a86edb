# Shared by the scripts/device_*.sh runs (sourced, not run): `step` and the machine description.
# Needs $out (the log folder) set before sourcing.

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
