#!/usr/bin/env bash
# End-to-end: `strata devices --sysfs-root` on a fake Ryzen desktop (Raphael iGPU at KFD node 1,
# RX 9070 XT at node 2): the card picked is HIP ordinal 1, never ordinal 0. Usage: devices.sh <strata>
set -euo pipefail
strata=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# node <n> <gfx_target_version> <location_id> <vram bytes> <device id>: a KFD GPU node and its PCI function.
node() {
  local dir=$root/sys/class/kfd/kfd/topology/nodes/$1
  mkdir -p "$dir/mem_banks/0"
  printf 'cpu_cores_count 0\nsimd_count 64\nsimd_per_cu 2\nwave_front_size 32\ngfx_target_version %s\nvendor_id 4098\ndevice_id %s\nlocation_id %s\ndomain 0\n' \
    "$2" "$5" "$3" >"$dir/properties"
  printf 'heap_type 1\nsize_in_bytes %s\n' "$4" >"$dir/mem_banks/0/properties"
}
mkdir -p "$root/sys/class/kfd/kfd/topology/nodes/0"
printf 'cpu_cores_count 16\nsimd_count 0\n' >"$root/sys/class/kfd/kfd/topology/nodes/0/properties"
node 1 100306 $((0x0e << 8)) 536870912 5710     # gfx1036 iGPU at 0000:0e:00.0, 512 MiB
node 2 120001 $((0x03 << 8)) 17095983104 30032  # gfx1201 at 0000:03:00.0, 16 GB

which=$("$strata" devices --sysfs-root "$root" --for-archs all --which)
[[ $which == "hip 1 0000:03:00.0 gfx1201 "* ]] || fail "--which gave '$which'"
[[ $("$strata" devices --sysfs-root "$root" --which) == cpu ]] || fail "a CPU-only build must answer cpu"
[[ $("$strata" devices --sysfs-root "$root" --for-archs gfx1036,gfx1201 --device hip:0 --which 2>&1) == *"too little memory"* ]] ||
  fail "choosing the 512 MiB iGPU must be refused with the reason"
table=$("$strata" devices --sysfs-root "$root" --for-archs all)
grep -q '0000:03:00.0.*gfx1201.*hip 1\*.*yes  <- auto' <<<"$table" || fail "table: $table"
"$strata" devices --sysfs-root "$root" --json | grep -q '"ordinal_predicted": true' || fail "--json lacks the prediction flag"
empty=$(mktemp -d)
out=$("$strata" devices --sysfs-root "$empty") || fail "no GPU must exit 0"
rm -rf "$empty"
[[ $out == *"No GPU found"* ]] || fail "no-GPU message: $out"
echo PASS
