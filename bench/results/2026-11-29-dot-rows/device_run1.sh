#!/bin/bash
# Device A/B: bandwidth probe loops and decode base/new at 16 and 8 threads.
D=/tmp/dev; mkdir -p $D; tar -C $D -xJf build-kernels/devpack/bundle.tar.xz
export LD_LIBRARY_PATH=$D/lib
nproc; lscpu | grep -E 'Model name|Thread|Core|Socket|NUMA node\(s\)'
$D/strata-new synth --preset qwen3-30b-a3b --layers 8 -o /tmp/s8.gguf --vocab $D/ggml-vocab-llama-spm.gguf 2>&1 | tail -1
$D/memory_bandwidth_bench --benchmark_repetitions=2 --benchmark_report_aggregates_only=true 2>&1 | grep -E 'median' | tee $OUT/probe.txt
for round in 1 2; do
  for t in 16 8; do
    for v in base new; do
      $D/strata-$v bench -m /tmp/s8.gguf -p 0 -n 64 -r 3 --device cpu -t $t > $OUT/$v-t$t-r$round.txt 2>&1
      echo "$round t$t $v $(grep -E 'DRAM' $OUT/$v-t$t-r$round.txt | cut -c1-28) $(grep tg64 $OUT/$v-t$t-r$round.txt)"
    done
  done
done | tee $OUT/decode.txt
