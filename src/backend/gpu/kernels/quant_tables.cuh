#pragma once
// Device copies of the lookup tables that define the IQ formats and MXFP4 (quant/iq_grids.h,
// quant/mxfp4.cpp), built from the same initializer files as the host tables (quant/*.inc), so
// every number exists in one place.
//
//   const uint64_t entry = tables::kIq2xxsGrid[index];   // in device code, as the host's kIq2xxsGrid
//
// The kernel files are compiled without relocatable device code (each .cu file is its own device
// module), so the tables are `static`: each module that reads them gets its own copy (about 34 KB).
// Global memory (__device__), not __constant__: the lanes of a warp index them with different
// data, which constant memory would serialize; L1 serves the repeated reads.

#include <cstdint>

namespace strata::gpu::tables {

static __device__ const uint64_t kIq1sGrid[2048] = {
#include "quant/iq1s_grid.inc"
};

static __device__ const uint64_t kIq2xxsGrid[256] = {
#include "quant/iq2xxs_grid.inc"
};

static __device__ const uint64_t kIq2xsGrid[512] = {
#include "quant/iq2xs_grid.inc"
};

static __device__ const uint64_t kIq2sGrid[1024] = {
#include "quant/iq2s_grid.inc"
};

static __device__ const uint32_t kIq3xxsGrid[256] = {
#include "quant/iq3xxs_grid.inc"
};

static __device__ const uint32_t kIq3sGrid[512] = {
#include "quant/iq3s_grid.inc"
};

static __device__ const uint8_t kIq2SignTable[128] = {
#include "quant/iq2_sign_table.inc"
};

static __device__ const int8_t kIq4nlValues[16] = {
#include "quant/iq4nl_values.inc"
};

static __device__ const int8_t kE2M1Doubled[16] = {
#include "quant/mxfp4_values.inc"
};

}  // namespace strata::gpu::tables
