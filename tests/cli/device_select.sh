#!/usr/bin/env bash
# End-to-end: `--device` by identity and `strata devices --selftest`. On a fake Ryzen desktop
# (--sysfs-root: Raphael iGPU at KFD node 1, RX 9070 XT at node 2) a PCI bus id, a UUID and an
# ordinal all resolve to HIP ordinal 1 with the line model-loading commands print; unknown
# identities fail listing what exists; the self-test skips cleanly where no usable GPU exists and
# passes where one does. Usage: device_select.sh <strata> [testdata-root]
set -euo pipefail
strata=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
model=$repo/models/strata-kjv-moe.gguf
root=$(mktemp -d)
empty=$(mktemp -d)
trap 'rm -rf "$root" "$empty"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# node <n> <gfx_target_version> <location_id> <vram bytes> <device id> <unique_id>: a KFD GPU node.
node() {
  local dir=$root/sys/class/kfd/kfd/topology/nodes/$1
  mkdir -p "$dir/mem_banks/0"
  printf 'cpu_cores_count 0\nsimd_count 64\nsimd_per_cu 2\nwave_front_size 32\ngfx_target_version %s\nvendor_id 4098\ndevice_id %s\nlocation_id %s\ndomain 0\nunique_id %s\n' \
    "$2" "$5" "$3" "$6" >"$dir/properties"
  printf 'heap_type 1\nsize_in_bytes %s\n' "$4" >"$dir/mem_banks/0/properties"
}
mkdir -p "$root/sys/class/kfd/kfd/topology/nodes/0"
printf 'cpu_cores_count 16\nsimd_count 0\n' >"$root/sys/class/kfd/kfd/topology/nodes/0/properties"
node 1 100306 $((0x0e << 8)) 536870912 5710 4369     # gfx1036 iGPU at 0000:0e:00.0, 512 MiB
node 2 120001 $((0x03 << 8)) 17095983104 30032 8738  # gfx1201 at 0000:03:00.0, 16 GB, GPU-0000000000002222

for flag in pci:0000:03:00.0 GPU-0000000000002222 1 hip:1; do
  out=$("$strata" devices --sysfs-root "$root" --for-archs all --device "$flag")
  grep -q "^strata: using HIP GPU 1 (pci 0000:03:00.0, AMD gfx1201 (RDNA4), gfx1201): named by --device $flag" <<<"$out" ||
    fail "--device $flag: $out"
done
out=$("$strata" devices --sysfs-root "$root" --for-archs all)
grep -q "^strata: using HIP GPU 1 (pci 0000:03:00.0, .*the usable discrete GPU with the most memory" <<<"$out" || fail "auto: $out"
out=$(HIP_VISIBLE_DEVICES=1 "$strata" devices --sysfs-root "$root" --for-archs all --device 0)
grep -q "^strata: using HIP GPU 0 (pci 0000:03:00.0, .*HIP_VISIBLE_DEVICES=1 set by you is respected" <<<"$out" ||
  fail "ordinals must count within the user's HIP_VISIBLE_DEVICES: $out"
out=$("$strata" devices --sysfs-root "$root" --for-archs all --device pci:0000:99:00.0)
[[ $out == *"got no match"*"0000:03:00.0 gfx1201"*"0000:0e:00.0 gfx1036"* ]] || fail "unknown bus id must list the devices: $out"

# The self-test: no GPU (an empty tree) skips with exit 0; a fake tree is never handed to a runtime.
out=$("$strata" devices --sysfs-root "$empty" --selftest) || fail "selftest without a GPU must exit 0: $out"
[[ $out == "selftest skipped: no usable GPU"* ]] || fail "selftest without a GPU: $out"
out=$("$strata" devices --sysfs-root "$root" --for-archs all --selftest) || fail "selftest on a fake tree must exit 0: $out"
[[ $out == "selftest skipped: --sysfs-root"*"HIP GPU 1 (pci 0000:03:00.0"* ]] || fail "selftest on a fake tree: $out"
# -m: the model's memory plan on the card the self-test picked (the fake 16 GB RX 9070 XT), or on
# the CPU when there is none.
out=$("$strata" devices --sysfs-root "$root" --for-archs all --selftest -m "$model") || fail "selftest -m on a fake tree: $out"
[[ $out == *"memory plan of"*"VRAM"*"FITS"* ]] || fail "selftest -m on a fake tree lacks the plan: $out"
out=$("$strata" devices --sysfs-root "$empty" --selftest -m "$model") || fail "selftest -m without a GPU: $out"
[[ $out == *"on the CPU"*"everything runs on the CPU"* ]] || fail "selftest -m without a GPU: $out"
# This machine as it is: skipped without a usable GPU, passed with one (GPU builds on GPU machines).
out=$("$strata" devices --selftest --selftest-mib 16) || fail "selftest here: $out"
[[ $out == "selftest skipped: no usable GPU"* || $out == *"selftest passed" ]] || fail "selftest here: $out"

# Model-loading commands: an unknown identity fails before loading, naming what exists; --gpu
# still works and says it is deprecated.
[[ -f $model ]] || fail "the built-in model is missing: $model"
if err=$("$strata" run -m "$model" -p "In the beginning" -n 2 --device pci:0000:99:00.0 2>&1 >/dev/null); then
  fail "run --device pci:0000:99:00.0 must fail"
fi
[[ $err == *"--device pci:0000:99:00.0: expected a PCI bus id of one of these devices, got no match"* ]] || fail "run error: $err"
err=$("$strata" run -m "$model" -p "In the beginning" -n 2 --device cpu --ngl 0 2>&1 >/dev/null) || fail "run --device cpu: $err"
[[ $err != *"strata: using"* ]] || fail "--device cpu must stay quiet: $err"
if err=$("$strata" run -m "$model" -p "x" -n 1 --device cpu --gpu 0 2>&1 >/dev/null); then fail "--device cpu --gpu 0 must conflict"; fi
[[ $err == *"expected one of them, got both"* ]] || fail "conflict message: $err"
err=$("$strata" bench -m "$model" -p 8 -n 2 -r 1 --gpu 0 2>&1 >/dev/null) || true
[[ $err == *"--gpu is deprecated: use --device 0"* ]] || fail "--gpu must say it is deprecated: $err"

# Several GPUs: flags that cannot work are refused with the reason, before anything loads.
expect_error() {  # <expected fragment> <run args...>
  local want=$1 err
  shift
  if err=$("$strata" run -m "$model" -p "x" -n 1 "$@" 2>&1 >/dev/null); then fail "run $* must fail"; fi
  [[ $err == *"$want"* ]] || fail "run $*: expected \"$want\", got: $err"
}
expect_error "--split-at 4: expected with --split layer" --gpus 0,1 --split tensor --split-at 4
expect_error "--split: expected layer, none or tensor" --gpus 0,1 --split rows
expect_error "--split-at: expected with --gpus" --split-at 4
expect_error "a list of sizes is for a model split over --gpus" --vram-budget 10GiB,5GiB
expect_error "--load: expected auto, mmap or memory" --load disk
expect_error "--expert-prefetch: Value 100 not in range 0 to 64" --expert-prefetch 100
expect_error "--gpus 0,1 with --device cpu: expected one of them" --gpus 0,1 --device cpu
echo PASS
