#!/bin/bash
# Device A/B, second run: decode base (HEAD) / new (this tree: multi-row for t >= 1, Q4_K/Q5_K
# AVX-512 port-5 relief, AVX2 probe) at 16 and 8 threads, alternating; then the kernels alone.
D=/tmp/dev; mkdir -p $D; tar -C $D -xJf build-kernels/devpack/bundle.tar.xz
export LD_LIBRARY_PATH=$D/lib
$D/strata-new synth --preset qwen3-30b-a3b --layers 8 -o /tmp/s8.gguf --vocab $D/ggml-vocab-llama-spm.gguf 2>&1 | tail -1
for round in 1 2; do
  for t in 16 8; do
    for v in base new; do
      $D/strata-$v bench -m /tmp/s8.gguf -p 0 -n 64 -r 3 --device cpu -t $t > $OUT/$v-t$t-r$round.txt 2>&1
      echo "$round t$t $v $(grep -E 'DRAM' $OUT/$v-t$t-r$round.txt | cut -c1-28) $(grep tg64 $OUT/$v-t$t-r$round.txt)"
    done
  done
done | tee $OUT/decode.txt
for v in base new; do echo "$v $($D/strata-$v bench -m /tmp/s8.gguf -p 64 -n 0 -r 2 --device cpu -t 16 --no-bound 2>&1 | grep pp64)"; done | tee $OUT/pp.txt
$D/dot_rows_bench --benchmark_min_time=0.3 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_filter='avx512/.*(4k/64MiB|huge/64KiB)' 2>&1 | grep median | awk '{print $1, $NF}' > $OUT/dot_rows_device.txt
