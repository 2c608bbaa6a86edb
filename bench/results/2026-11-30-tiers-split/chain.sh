#!/usr/bin/env bash
# Issue 9: what slows decode's serial chain (lane end -> next routing, ~67 us a layer) with every
# expert in RAM: the same binary with the link busy (default: experts copied ahead and streamed),
# with no copies ahead (--expert-prefetch 0), and with no copies at all (--miss-lane cpu: every
# miss on the CPU), alternated; each run prints the chain's ms per token.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
for r in 1 2; do
  bench_env default_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  bench_env noahead_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0 --expert-prefetch 0
  bench_env cpuonly_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0 --miss-lane cpu
done
bench_env cpuonly_profile X=1 -- -p 0 -n 32 -r 1 --expert-slots 0 --miss-lane cpu --gpu-profile
grep -A16 "GPU op profile" "$out/cpuonly_profile.txt"
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
