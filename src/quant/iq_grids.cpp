// Lookup values of the IQ formats as defined by ggml (ggml-common.h, MIT licence, copyright the
// ggml authors), required for compatibility: a file quantized by llama.cpp decodes correctly only
// with exactly these values. The numbers live in quant/*.inc, one file per table, so that the GPU
// kernels' device copies (backend/gpu/kernels/quant_tables.cuh) are built from the same text.
// tests/quant/iq_grids_test.cpp checks their structure (counts, allowed bytes, order).
#include "quant/iq_grids.h"

namespace strata {

const uint8_t kIq2SignTable[128] = {
#include "quant/iq2_sign_table.inc"
};

const uint64_t kIq1sGrid[2048] = {
#include "quant/iq1s_grid.inc"
};

const uint64_t kIq2xxsGrid[256] = {
#include "quant/iq2xxs_grid.inc"
};

const uint64_t kIq2xsGrid[512] = {
#include "quant/iq2xs_grid.inc"
};

const uint64_t kIq2sGrid[1024] = {
#include "quant/iq2s_grid.inc"
};

const uint32_t kIq3xxsGrid[256] = {
#include "quant/iq3xxs_grid.inc"
};

const uint32_t kIq3sGrid[512] = {
#include "quant/iq3s_grid.inc"
};

const int8_t kIq4nlValues[16] = {
#include "quant/iq4nl_values.inc"
};

}  // namespace strata
