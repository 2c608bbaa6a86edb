#include "model/synth_metadata.h"

namespace strata {

GgufValue synth_u32(uint64_t v) { return GgufValue::make_int(GgufValueType::U32, static_cast<int64_t>(v)); }
GgufValue synth_i32(int64_t v) { return GgufValue::make_int(GgufValueType::I32, v); }
GgufValue synth_f32(double v) { return GgufValue::make_float(GgufValueType::F32, v); }

Result<uint32_t> copy_tokenizer_keys(const GgufFile& file, std::vector<std::pair<std::string, GgufValue>>& keys) {
    const GgufValue* tokens = file.find("tokenizer.ggml.tokens");
    if (!tokens || !tokens->is_array() || tokens->as_array().items.empty()) {
        return Status::error("{}: expected a vocabulary (tokenizer.ggml.tokens), found none — pass a GGUF with a "
                             "tokenizer to --vocab",
                             file.path());
    }
    for (const auto& e : file.metadata()) {
        if (e.key.rfind("tokenizer.", 0) == 0) keys.emplace_back(e.key, e.value);
    }
    return static_cast<uint32_t>(tokens->as_array().items.size());
}

}  // namespace strata
