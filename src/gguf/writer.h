#pragma once
// GGUF writer (v3) for tools and tests: metadata of every type, tensors of every type, alignment.
// Tensor data is copied into the writer, so keep it for small and medium files; very large files
// (synthetic benchmark models) use add_tensor_generator, which produces bytes while writing.
//
//   GgufWriter w;
//   w.set_string("general.architecture", "qwen3moe");
//   w.set_u32("qwen3moe.block_count", 48);
//   STRATA_TRY(w.add_tensor("token_embd.weight", TensorType::Q4_K, {2048, 32000}, bytes));
//   STRATA_TRY(w.write("out.gguf"));

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/tensor_type.h"
#include "gguf/value.h"

namespace strata {

class GgufWriter {
public:
    void set(const std::string& key, GgufValue value);
    void set_u8(const std::string& key, uint8_t v) { set(key, GgufValue::make_int(GgufValueType::U8, v)); }
    void set_i8(const std::string& key, int8_t v) { set(key, GgufValue::make_int(GgufValueType::I8, v)); }
    void set_u16(const std::string& key, uint16_t v) { set(key, GgufValue::make_int(GgufValueType::U16, v)); }
    void set_i16(const std::string& key, int16_t v) { set(key, GgufValue::make_int(GgufValueType::I16, v)); }
    void set_u32(const std::string& key, uint32_t v) { set(key, GgufValue::make_int(GgufValueType::U32, v)); }
    void set_i32(const std::string& key, int32_t v) { set(key, GgufValue::make_int(GgufValueType::I32, v)); }
    void set_u64(const std::string& key, uint64_t v) { set(key, GgufValue::make_uint64(v)); }
    void set_i64(const std::string& key, int64_t v) { set(key, GgufValue::make_int(GgufValueType::I64, v)); }
    void set_f32(const std::string& key, float v) { set(key, GgufValue::make_float(GgufValueType::F32, v)); }
    void set_f64(const std::string& key, double v) { set(key, GgufValue::make_float(GgufValueType::F64, v)); }
    void set_bool(const std::string& key, bool v) { set(key, GgufValue::make_bool(v)); }
    void set_string(const std::string& key, std::string v) { set(key, GgufValue::make_string(std::move(v))); }
    void set_string_array(const std::string& key, const std::vector<std::string>& v);
    void set_i32_array(const std::string& key, const std::vector<int32_t>& v);
    void set_f32_array(const std::string& key, const std::vector<float>& v);

    // Alignment of tensor data (a power of two); written as general.alignment when not 32.
    Status set_alignment(uint32_t alignment);

    // `ne` lists dimensions with the row length first (GGUF order). `data` must hold exactly the
    // tensor's bytes for `type`.
    Status add_tensor(const std::string& name, TensorType type, const std::vector<uint64_t>& ne,
                      std::vector<uint8_t> data);
    // Same, but the bytes are produced at write time: `generate(dst, n)` is called with
    // consecutive pieces of the tensor, each a whole number of rows and at most 64 MiB (or one
    // row, if a row is larger), until all its bytes are written.
    using Generator = std::function<void(uint8_t* dst, uint64_t n_bytes)>;
    Status add_tensor_generator(const std::string& name, TensorType type, const std::vector<uint64_t>& ne,
                                Generator generate);

    Status write(const std::string& path) const;

private:
    struct PendingTensor {
        std::string name;
        TensorType type;
        std::vector<uint64_t> ne;
        uint64_t n_bytes;
        std::vector<uint8_t> data;
        Generator generate;
    };
    Result<uint64_t> check_tensor(const std::string& name, TensorType type, const std::vector<uint64_t>& ne) const;

    std::vector<std::pair<std::string, GgufValue>> metadata_;
    std::vector<PendingTensor> tensors_;
    uint32_t alignment_ = 32;
};

}  // namespace strata
