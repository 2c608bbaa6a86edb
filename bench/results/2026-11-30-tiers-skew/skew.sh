#!/usr/bin/env bash
# Issue 9, skewed routing (Zipf 1.0 per layer): the tiers with a 10 GiB budget and with every
# expert in RAM.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
model=/tmp/strata-synth-48l-skew.gguf
synth_model --router-skew 1.0
bench skew_10g -p 512 -n 64 -r 2 --vram-budget 10GiB
bench skew_ram_all -p 512 -n 64 -r 2 --expert-slots 0
