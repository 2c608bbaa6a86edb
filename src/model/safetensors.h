#pragma once
// Reads safetensors checkpoints (the format PyTorch tools write): an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets}}, then the raw tensor bytes. Used by
// `strata convert` for the built-in model; tensors are small, so the whole file is read and every
// tensor is returned as f32.
//
//   STRATA_ASSIGN_OR_RETURN(auto tensors, read_safetensors("model.safetensors"));
//   const SafetensorsTensor& t = tensors.at("token_embd.weight");   // t.shape = {4096, 384}
//   float first = t.values[0];

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace strata {

struct SafetensorsTensor {
    std::vector<int64_t> shape;  // PyTorch order: the row length is last
    std::vector<float> values;   // F32, F16 and BF16 in the file all become f32
};

// Adds the file's tensors to `out`; a name already present is an error (shards must not overlap).
Status read_safetensors(const std::string& path, std::map<std::string, SafetensorsTensor>& out);

}  // namespace strata
