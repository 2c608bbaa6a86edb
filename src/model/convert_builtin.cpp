#include "model/convert_builtin.h"

#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "core/file.h"
#include "gguf/writer.h"
#include "model/safetensors.h"
#include "quant/traits.h"

namespace strata {

namespace {

Result<nlohmann::json> read_json(const std::string& path, const char* what) {
    STRATA_ASSIGN_OR_RETURN(std::string text, read_file_to_string(path));
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return Status::error("{}: expected the {} as a JSON object", path, what);
    return j;
}

// tokenizer.ggml.* and the chat template, from train_tokenizer.py's JSON.
Status write_tokenizer_keys_or_throw(const nlohmann::json& t, const std::string& path, GgufWriter& w) {
    for (const char* key : {"model", "pre", "tokens", "token_types", "merges", "bos", "eos", "add_bos", "chat_template"}) {
        if (!t.contains(key)) return Status::error("{}: expected the key \"{}\" — was it written by train_tokenizer.py?", path, key);
    }
    const auto tokens = t["tokens"].get<std::vector<std::string>>();
    const auto types = t["token_types"].get<std::vector<int32_t>>();
    if (types.size() != tokens.size()) {
        return Status::error("{}: {} token types for {} tokens", path, types.size(), tokens.size());
    }
    auto id_of = [&](const std::string& text) -> int32_t {
        for (size_t i = 0; i < tokens.size(); ++i) {
            if (tokens[i] == text) return static_cast<int32_t>(i);
        }
        return -1;
    };
    const int32_t bos = id_of(t["bos"].get<std::string>()), eos = id_of(t["eos"].get<std::string>());
    if (bos < 0 || eos < 0) return Status::error("{}: the BOS or EOS text is not one of the tokens", path);
    w.set_string("tokenizer.ggml.model", t["model"].get<std::string>());
    w.set_string("tokenizer.ggml.pre", t["pre"].get<std::string>());
    w.set_string_array("tokenizer.ggml.tokens", tokens);
    w.set_i32_array("tokenizer.ggml.token_type", types);
    w.set_string_array("tokenizer.ggml.merges", t["merges"].get<std::vector<std::string>>());
    w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(bos));
    w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(eos));
    w.set_bool("tokenizer.ggml.add_bos_token", t["add_bos"].get<bool>());
    w.set_bool("tokenizer.ggml.add_eos_token", false);
    w.set_string("tokenizer.chat_template", t["chat_template"].get<std::string>());
    return Status::ok();
}

Status write_tokenizer_keys(const nlohmann::json& t, const std::string& path, GgufWriter& w) {
    try {
        return write_tokenizer_keys_or_throw(t, path, w);
    } catch (const nlohmann::json::exception& e) {  // a key of the wrong type
        return Status::error("{}: {} — was it written by train_tokenizer.py?", path, e.what());
    }
}

struct BuiltinConfig {
    uint32_t n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_expert, n_expert_used, n_ff_expert,
        context_length;
    float rope_base, rms_eps;
};

Result<BuiltinConfig> parse_config(const nlohmann::json& j, const std::string& path) {
    BuiltinConfig c{};
    std::pair<const char*, uint32_t*> sizes[] = {
        {"n_vocab", &c.n_vocab},     {"n_embd", &c.n_embd},       {"n_layer", &c.n_layer},
        {"n_head", &c.n_head},       {"n_head_kv", &c.n_head_kv}, {"head_dim", &c.head_dim},
        {"n_expert", &c.n_expert},   {"n_expert_used", &c.n_expert_used},
        {"n_ff_expert", &c.n_ff_expert}, {"context_length", &c.context_length}};
    for (auto [key, out] : sizes) {
        if (!j.contains(key) || !j[key].is_number_unsigned() || j[key].get<uint64_t>() == 0) {
            return Status::error("{}: expected \"{}\" as a positive integer", path, key);
        }
        *out = j[key].get<uint32_t>();
    }
    for (auto [key, out] : {std::pair{"rope_base", &c.rope_base}, std::pair{"rms_eps", &c.rms_eps}}) {
        if (!j.contains(key) || !j[key].is_number()) return Status::error("{}: expected \"{}\" as a number", path, key);
        *out = j[key].get<float>();
    }
    if (c.n_expert_used > c.n_expert || c.n_head % c.n_head_kv != 0) {
        return Status::error("{}: expected n_expert_used <= n_expert and n_head a multiple of n_head_kv", path);
    }
    return c;
}

// One tensor of the model: its GGUF name, its PyTorch shape (row length last) and whether it is
// a weight matrix (quantized) or a vector/router kept in F32 as llama.cpp's converter keeps them.
struct TensorSpec {
    std::string name;
    std::vector<int64_t> shape;
    bool matrix;
};

std::vector<TensorSpec> expected_tensors(const BuiltinConfig& c) {
    const int64_t e = c.n_embd, q = int64_t(c.n_head) * c.head_dim, kv = int64_t(c.n_head_kv) * c.head_dim;
    const int64_t x = c.n_expert, ff = c.n_ff_expert;
    std::vector<TensorSpec> t;
    t.push_back({"token_embd.weight", {c.n_vocab, e}, true});
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        t.push_back({b + "attn_norm.weight", {e}, false});
        t.push_back({b + "attn_q.weight", {q, e}, true});
        t.push_back({b + "attn_k.weight", {kv, e}, true});
        t.push_back({b + "attn_v.weight", {kv, e}, true});
        t.push_back({b + "attn_output.weight", {e, q}, true});
        t.push_back({b + "attn_q_norm.weight", {c.head_dim}, false});
        t.push_back({b + "attn_k_norm.weight", {c.head_dim}, false});
        t.push_back({b + "ffn_norm.weight", {e}, false});
        t.push_back({b + "ffn_gate_inp.weight", {x, e}, false});  // the router decides routing: F32
        t.push_back({b + "ffn_gate_exps.weight", {x, ff, e}, true});
        t.push_back({b + "ffn_up_exps.weight", {x, ff, e}, true});
        t.push_back({b + "ffn_down_exps.weight", {x, e, ff}, true});
    }
    t.push_back({"output_norm.weight", {e}, false});
    t.push_back({"output.weight", {c.n_vocab, e}, true});
    return t;
}

// llama.cpp's general.file_type values (LLAMA_FTYPE_*) for the types `convert` writes.
uint32_t file_type_of(TensorType t) {
    switch (t) {
        case TensorType::F32: return 0;
        case TensorType::F16: return 1;
        case TensorType::Q8_0: return 7;
        default: return 7;
    }
}

std::string shape_text(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

}  // namespace

Status write_builtin_vocab(const std::string& tokenizer_json, const std::string& out) {
    STRATA_ASSIGN_OR_RETURN(nlohmann::json t, read_json(tokenizer_json, "tokenizer"));
    GgufWriter w;
    w.set_string("general.architecture", "qwen3moe");
    w.set_string("general.name", "strata-kjv-moe vocabulary");
    STRATA_TRY(write_tokenizer_keys(t, tokenizer_json, w));
    return w.write(out);
}

Status convert_builtin_model(const BuiltinConvertOptions& o) {
    const QuantTraits* quant = find_quant_traits(o.matrix_type);
    if (!quant || !quant->quantize_row) {
        return Status::error("convert: no quantizer for {}; use q8_0, f16 or f32", tensor_type_name(o.matrix_type));
    }
    STRATA_ASSIGN_OR_RETURN(nlohmann::json tok, read_json(o.tokenizer_json, "tokenizer"));
    STRATA_ASSIGN_OR_RETURN(nlohmann::json cfg_json, read_json(o.config_json, "model config"));
    STRATA_ASSIGN_OR_RETURN(BuiltinConfig c, parse_config(cfg_json, o.config_json));
    if (!tok.contains("tokens") || tok["tokens"].size() != c.n_vocab) {
        return Status::error("{}: the tokenizer's token count differs from n_vocab {} in {}", o.tokenizer_json,
                             c.n_vocab, o.config_json);
    }
    std::map<std::string, SafetensorsTensor> tensors;
    for (const auto& path : o.checkpoints) STRATA_TRY(read_safetensors(path, tensors));

    GgufWriter w;
    const std::string a = "qwen3moe.";
    w.set_string("general.architecture", "qwen3moe");
    w.set_string("general.name", o.name);
    w.set_string("general.description",
                 "A small Qwen3-MoE trained by the Strata project on the King James Bible (public domain text); "
                 "see tools/builtin_model/");
    w.set_u32("general.file_type", file_type_of(o.matrix_type));
    w.set_u32("general.quantization_version", 2);
    w.set_u32(a + "block_count", c.n_layer);
    w.set_u32(a + "context_length", c.context_length);
    w.set_u32(a + "embedding_length", c.n_embd);
    // Only the experts' width exists in this model; llama.cpp reads feed_forward_length for every
    // architecture, so it gets the same value, as Hugging Face's Qwen3-MoE configs do.
    w.set_u32(a + "feed_forward_length", c.n_ff_expert);
    w.set_u32(a + "attention.head_count", c.n_head);
    w.set_u32(a + "attention.head_count_kv", c.n_head_kv);
    w.set_u32(a + "attention.key_length", c.head_dim);
    w.set_u32(a + "attention.value_length", c.head_dim);
    w.set_f32(a + "rope.freq_base", c.rope_base);
    w.set_f32(a + "attention.layer_norm_rms_epsilon", c.rms_eps);
    w.set_u32(a + "expert_count", c.n_expert);
    w.set_u32(a + "expert_used_count", c.n_expert_used);
    w.set_u32(a + "expert_feed_forward_length", c.n_ff_expert);
    STRATA_TRY(write_tokenizer_keys(tok, o.tokenizer_json, w));

    const std::vector<TensorSpec> specs = expected_tensors(c);
    for (const TensorSpec& s : specs) {
        auto it = tensors.find(s.name);
        if (it == tensors.end()) return Status::error("convert: the checkpoint has no tensor {}", s.name);
        if (it->second.shape != s.shape) {
            return Status::error("convert: {}: expected shape {}, got {} (does {} match the checkpoint?)", s.name,
                                 shape_text(s.shape), shape_text(it->second.shape), o.config_json);
        }
        const std::vector<uint64_t> ne(s.shape.rbegin(), s.shape.rend());  // GGUF lists the row length first
        const TensorType type = s.matrix ? o.matrix_type : TensorType::F32;
        const TensorTypeInfo* info = tensor_type_info(type);
        if (ne[0] % info->block_size != 0) {
            return Status::error("convert: {}: rows of {} values do not split into {} blocks of {}", s.name, ne[0],
                                 tensor_type_name(type), info->block_size);
        }
        const uint64_t rows = it->second.values.size() / ne[0], row_bytes = info->row_bytes(ne[0]);
        std::vector<uint8_t> bytes(rows * row_bytes);
        const QuantTraits& q = quant_traits(type);
        for (uint64_t r = 0; r < rows; ++r) {
            q.quantize_row(it->second.values.data() + r * ne[0], bytes.data() + r * row_bytes, int64_t(ne[0]));
        }
        STRATA_TRY(w.add_tensor(s.name, type, ne, std::move(bytes)));
        tensors.erase(it);
    }
    if (!tensors.empty()) {
        return Status::error("convert: the checkpoint holds {} tensors this model does not use (first: {})",
                             tensors.size(), tensors.begin()->first);
    }
    return w.write(o.out);
}

}  // namespace strata
