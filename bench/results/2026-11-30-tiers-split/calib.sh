#!/usr/bin/env bash
# Issue 9: the CPU lane's cost model calibrated between 8 and 40 tokens (was: 1 and 8, which the
# tiles fooled): the prompt scenarios where the CPU lane takes a share, and a 10 GiB pp4096
# where it must take (almost) none.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
bench_env b10_4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --vram-budget 10GiB
bench_env ram X=1 -- -p 512 -n 0 -r 3 --expert-slots 0
bench_env b10 X=1 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
bench_env ram4096 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
bench_env b10_4096_r2 X=1 -- -p 4096 -b 4096 -n 0 -r 2 --vram-budget 10GiB
bench_env b2 X=1 -- -p 512 -n 128 -r 2 --vram-budget 2GiB
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
