#!/usr/bin/env bash
# Issue 33: a first run of the synthetic Qwen3.8-Flash-Next at its real shapes on the H200: the
# Q2_0 mix (48 blocks, 512 experts top-10, vocabulary 248,320; `strata synth --preset
# qwen3.8-flash-next --mix q2_0`) with its n-gram table cut to 20,000,000 rows (1.8 GB instead of
# 28.8 GB, for the 64 GiB disk) and read from the SSD with O_DIRECT (--ple-table ssd), so every
# row still comes from the disk. strata bench with a 12 GiB and a 24 GiB budget. Logs in one tar.
# Not yet run: no device time was left for it (the synthetic file alone is ~40 GB to write).
# Usage (repo root on the device): bench/results/2026-12-07-qwen4exp-gpu/flash.sh OUT BIN TESTDATA
# FLASH_GGUF: an already synthesized file (its first shard) to use and keep instead.
source "$(dirname "$0")/../../../scripts/device_common.sh" "$@"
synth_flash
step plan12 60 "$bin/strata" plan -m "$model" --vram 12GiB --ram 100GiB --ctx 4096
grep -E "n-gram|disk|VRAM|RAM" "$out/plan12.txt" | head -8
for budget in 12 24; do
  bench_line "b$budget" --device gpu --vram-budget "${budget}GiB" --ple-table ssd -p 512 -n 32 -r 1
done
drop_flash
tar -C "$out" -czf "$out.tgz" . && rm -rf "$out"
