#include "model/synth.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <cmath>
#include <numeric>
#include <random>

#include "core/fp16.h"
#include "gguf/writer.h"
#include "model/random_weights.h"
#include "quant/iq2.h"
#include "quant/iq3.h"
#include "quant/iq4.h"
#include "quant/iq1.h"
#include "quant/traits.h"

namespace strata {

namespace {

// The i-quants synth can write: their fp16 d comes first and scales the whole block.
static_assert(offsetof(BlockIq2Xxs, d) == 0 && offsetof(BlockIq2Xs, d) == 0 && offsetof(BlockIq2S, d) == 0);
static_assert(offsetof(BlockIq3Xxs, d) == 0 && offsetof(BlockIq3S, d) == 0 && offsetof(BlockIq1S, d) == 0);
static_assert(offsetof(BlockIq4Nl, d) == 0 && offsetof(BlockIq4Xs, d) == 0);
bool synth_can_write(TensorType t) {
    const QuantTraits* q = find_quant_traits(t);
    if (!q || !q->dot) return false;
    if (q->quantize_row) return true;
    switch (t) {
        case TensorType::IQ2_XXS: case TensorType::IQ2_XS: case TensorType::IQ2_S: case TensorType::IQ3_XXS:
        case TensorType::IQ3_S: case TensorType::IQ1_S: case TensorType::IQ4_NL: case TensorType::IQ4_XS:
            return true;
        default:
            return false;  // IQ1_M: its scale is spread over the sub-scales' spare bits
    }
}

// Quantizing tens of GB with the reference quantizers would take many minutes, so each type
// gets a pool of blocks quantized once from Gaussian values; tensors are filled with blocks
// drawn from the pool. The values are then realistic per block (real scales, real code
// distributions) at memcpy speed.
class BlockPool {
public:
    BlockPool(TensorType type, float stddev, std::mt19937_64& rng) : type_(type) {
        const TensorTypeInfo* info = tensor_type_info(type);
        const QuantTraits& q = quant_traits(type);
        block_bytes_ = info->block_bytes;
        constexpr int kRowsOfBlocks = 64;
        const int64_t n = static_cast<int64_t>(info->block_size) * kBlocksPerRow;
        std::normal_distribution<float> gauss(0.0f, stddev);
        std::vector<float> values(static_cast<size_t>(n));
        pool_.resize(static_cast<size_t>(kRowsOfBlocks) * kBlocksPerRow * block_bytes_);
        if (!q.quantize_row) {
            random_scaled_blocks(type, stddev, rng);
        } else {
            for (int r = 0; r < kRowsOfBlocks; ++r) {
                for (auto& v : values) v = gauss(rng);
                q.quantize_row(values.data(), pool_.data() + static_cast<size_t>(r) * kBlocksPerRow * block_bytes_, n);
            }
        }
        n_blocks_ = static_cast<uint64_t>(kRowsOfBlocks) * kBlocksPerRow;
    }

    void fill(uint8_t* dst, uint64_t n_bytes, std::mt19937_64& rng) const {
        for (uint64_t off = 0; off < n_bytes; off += block_bytes_) {
            uint64_t pick = rng() % n_blocks_;
            std::copy_n(pool_.data() + pick * block_bytes_, std::min<uint64_t>(block_bytes_, n_bytes - off), dst + off);
        }
    }

private:
    // Types without a reference quantizer here (the i-quants): random valid blocks (random codes,
    // grid indices and sub-scales), each scaled through its fp16 super-scale d, which these
    // formats keep first in the block and which multiplies every value, to the spread asked for.
    void random_scaled_blocks(TensorType type, float stddev, std::mt19937_64& rng) {
        const int64_t block_values = tensor_type_info(type)->block_size;
        std::mt19937 block_rng(static_cast<uint32_t>(rng()));
        const RandomWeight random =
            make_random_block_weight(type, block_values * kBlocksPerRow, int64_t(pool_.size() / block_bytes_ / kBlocksPerRow), 1, block_rng);
        std::memcpy(pool_.data(), random.bytes.data(), pool_.size());
        std::vector<float> v(static_cast<size_t>(block_values));
        for (size_t off = 0; off < pool_.size(); off += block_bytes_) {
            quant_traits(type).dequantize_row(pool_.data() + off, v.data(), block_values);
            double sum_sq = 0.0;
            for (float x : v) sum_sq += double(x) * x;
            const double rms = std::sqrt(sum_sq / double(block_values));
            uint16_t d = 0;
            std::memcpy(&d, pool_.data() + off, sizeof(d));
            d = fp32_to_fp16(static_cast<float>(double(fp16_to_fp32(d)) * (rms > 0 ? stddev / rms : 0.0)));
            std::memcpy(pool_.data() + off, &d, sizeof(d));
        }
    }

    static constexpr int kBlocksPerRow = 64;
    TensorType type_;
    uint32_t block_bytes_ = 0;
    uint64_t n_blocks_ = 0;
    std::vector<uint8_t> pool_;
};

struct TensorPlan {
    std::string name;
    TensorType type;
    std::vector<uint64_t> ne;
    float stddev;        // of the Gaussian values the weights are drawn from
    bool is_norm = false;
    int router_layer = -1;
    float norm_mean = 1.0f;  // norms: the mean of their weights (spread 10% of it)
};

std::vector<TensorPlan> plan_tensors(const SynthSpec& s) {
    const uint64_t e = s.n_embd, q = uint64_t(s.n_head) * s.head_dim, kv = uint64_t(s.n_head_kv) * s.head_dim;
    auto inv_sqrt = [](uint64_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); };
    std::vector<TensorPlan> t;
    t.push_back({"token_embd.weight", s.type_embedding, {e, s.n_vocab}, 1.0f});
    for (uint32_t l = 0; l < s.n_layers; ++l) {
        std::string b = "blk." + std::to_string(l) + ".";
        t.push_back({b + "attn_norm.weight", TensorType::F32, {e}, 0, true});
        t.push_back({b + "attn_q.weight", s.type_attention, {e, q}, inv_sqrt(e)});
        t.push_back({b + "attn_k.weight", s.type_attention, {e, kv}, inv_sqrt(e)});
        t.push_back({b + "attn_v.weight", s.type_attention_v, {e, kv}, inv_sqrt(e)});
        t.push_back({b + "attn_output.weight", s.type_attention, {q, e}, s.attention_output_scale * inv_sqrt(q)});
        t.push_back({b + "attn_q_norm.weight", TensorType::F32, {s.head_dim}, 0, true, -1, s.qk_norm_mean});
        t.push_back({b + "attn_k_norm.weight", TensorType::F32, {s.head_dim}, 0, true, -1, s.qk_norm_mean});
        t.push_back({b + "ffn_norm.weight", TensorType::F32, {e}, 0, true});
        t.push_back({b + "ffn_gate_inp.weight", TensorType::F32, {e, s.n_expert}, inv_sqrt(e), false, int(l)});
        t.push_back({b + "ffn_gate_exps.weight", s.type_expert_gate_up, {e, s.n_ff_expert, s.n_expert}, inv_sqrt(e)});
        t.push_back({b + "ffn_down_exps.weight", s.type_expert_down, {s.n_ff_expert, e, s.n_expert}, inv_sqrt(s.n_ff_expert)});
        t.push_back({b + "ffn_up_exps.weight", s.type_expert_gate_up, {e, s.n_ff_expert, s.n_expert}, inv_sqrt(e)});
    }
    t.push_back({"output_norm.weight", TensorType::F32, {e}, 0, true});
    t.push_back({"output.weight", s.type_output, {e, s.n_vocab}, inv_sqrt(e)});
    return t;
}

void write_metadata(const SynthSpec& s, const GgufFile* vocab, GgufWriter& w) {
    const std::string a = "qwen3moe.";
    w.set_string("general.architecture", "qwen3moe");
    w.set_string("general.name", s.name);
    w.set_string("general.description", "synthetic model written by strata synth: random weights, real shapes");
    w.set_u32(a + "block_count", s.n_layers);
    w.set_u32(a + "context_length", s.context_length);
    w.set_u32(a + "embedding_length", s.n_embd);
    w.set_u32(a + "feed_forward_length", s.n_ff_dense);
    w.set_u32(a + "attention.head_count", s.n_head);
    w.set_u32(a + "attention.head_count_kv", s.n_head_kv);
    w.set_f32(a + "rope.freq_base", s.rope_base);
    w.set_f32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
    w.set_u32(a + "expert_count", s.n_expert);
    w.set_u32(a + "expert_used_count", s.n_expert_used);
    w.set_u32(a + "attention.key_length", s.head_dim);
    w.set_u32(a + "attention.value_length", s.head_dim);
    w.set_u32(a + "expert_feed_forward_length", s.n_ff_expert);
    if (s.router_skew > 0) w.set_f32("synth.router_skew", static_cast<float>(s.router_skew));
    w.set_u64("synth.seed", s.seed);

    if (vocab) {
        for (const auto& e : vocab->metadata()) {
            if (e.key.rfind("tokenizer.", 0) == 0) w.set(e.key, e.value);
        }
        return;
    }
    // Byte-level BPE without merges: token i is byte i, written as GPT-2's printable mapping of
    // bytes to code points, so any text round-trips.
    std::vector<std::string> tokens;
    int unprintable_seen = 0;
    for (int b = 0; b < 256; ++b) {
        bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        int cp = printable ? b : 256 + unprintable_seen++;
        std::string utf8;
        if (cp < 0x80) utf8 += static_cast<char>(cp);
        else {
            utf8 += static_cast<char>(0xC0 | (cp >> 6));
            utf8 += static_cast<char>(0x80 | (cp & 0x3F));
        }
        tokens.push_back(utf8);
    }
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_string("tokenizer.ggml.pre", "default");
    w.set_string_array("tokenizer.ggml.tokens", tokens);
    w.set_i32_array("tokenizer.ggml.token_type", std::vector<int32_t>(256, 1));
    w.set_string_array("tokenizer.ggml.merges", {});
}

}  // namespace

std::vector<std::string> synth_preset_names() { return {"tiny", "qwen3-30b-a3b"}; }

Result<SynthSpec> synth_preset(const std::string& name) {
    SynthSpec s;
    s.name = "synth-" + name;
    if (name == "tiny") return s;
    if (name == "qwen3-30b-a3b") {
        // docs/BENCHMARKS.md: shapes and types of a Qwen3-30B-A3B Q4_K_M file.
        s.n_layers = 48; s.n_embd = 2048; s.n_head = 32; s.n_head_kv = 4; s.head_dim = 128;
        s.n_expert = 128; s.n_expert_used = 8; s.n_ff_expert = 768; s.n_ff_dense = 6144;
        s.n_vocab = 32000; s.context_length = 40960;
        s.type_embedding = s.type_attention = s.type_expert_gate_up = TensorType::Q4_K;
        s.type_attention_v = s.type_expert_down = s.type_output = TensorType::Q6_K;
        return s;
    }
    return Status::error("synth preset: expected one of tiny, qwen3-30b-a3b, got \"{}\"", name);
}

Status write_synth_model(const SynthSpec& spec_in, const GgufFile* vocab, const std::string& path,
                         const SynthProgress& progress) {
    SynthSpec spec = spec_in;
    if (vocab) {
        const GgufValue* tokens = vocab->find("tokenizer.ggml.tokens");
        if (!tokens || !tokens->is_array() || tokens->as_array().items.empty()) {
            return Status::error("{}: expected a vocabulary (tokenizer.ggml.tokens), found none", vocab->path());
        }
        spec.n_vocab = static_cast<uint32_t>(tokens->as_array().items.size());
    }
    if (spec.n_expert_used == 0 || spec.n_expert_used > spec.n_expert) {
        return Status::error("synth: expected 1 <= experts used <= {} experts, got {}", spec.n_expert, spec.n_expert_used);
    }
    for (TensorType t : {spec.type_embedding, spec.type_attention, spec.type_attention_v, spec.type_expert_gate_up,
                         spec.type_expert_down, spec.type_output}) {
        if (!synth_can_write(t)) {
            return Status::error("synth: Strata cannot write {} weights (use a type with a quantizer, e.g. Q4_K, Q2_0, "
                                 "NVFP4, or one of the i-quants IQ1_S, IQ2_XXS .. IQ4_XS)",
                                 tensor_type_name(t));
        }
    }

    GgufWriter writer;
    write_metadata(spec, vocab, writer);
    auto plans = plan_tensors(spec);
    uint64_t total = 0;
    for (const auto& p : plans) {
        uint64_t rows = 1;
        for (size_t i = 1; i < p.ne.size(); ++i) rows *= p.ne[i];
        total += tensor_type_info(p.type)->row_bytes(p.ne[0]) * rows;
    }

    auto rng = std::make_shared<std::mt19937_64>(spec.seed);
    auto done = std::make_shared<uint64_t>(0);
    std::vector<std::shared_ptr<BlockPool>> pools;
    for (const auto& p : plans) {
        if (p.is_norm) {
            // Norm weights near their mean with some spread, as trained models have.
            std::vector<float> v(p.ne[0]);
            std::normal_distribution<float> g(p.norm_mean, 0.1f * p.norm_mean);
            for (auto& x : v) x = g(*rng);
            std::vector<uint8_t> bytes(v.size() * 4);
            std::memcpy(bytes.data(), v.data(), bytes.size());
            *done += bytes.size();
            STRATA_TRY(writer.add_tensor(p.name, p.type, p.ne, std::move(bytes)));
            continue;
        }
        if (p.router_layer >= 0) {
            uint64_t rows = p.ne[1], cols = p.ne[0];
            std::vector<float> v(rows * cols);
            std::normal_distribution<float> g(0.0f, p.stddev);
            for (auto& x : v) x = g(*rng);
            if (spec.router_skew > 0) {
                std::vector<uint32_t> rank(rows);
                std::iota(rank.begin(), rank.end(), 0u);
                std::shuffle(rank.begin(), rank.end(), *rng);
                for (uint64_t r = 0; r < rows; ++r) {
                    float scale = static_cast<float>(std::pow(double(rank[r]) + 1.0, -spec.router_skew));
                    for (uint64_t c = 0; c < cols; ++c) v[r * cols + c] *= scale;
                }
            }
            std::vector<uint8_t> bytes(v.size() * 4);
            std::memcpy(bytes.data(), v.data(), bytes.size());
            *done += bytes.size();
            STRATA_TRY(writer.add_tensor(p.name, p.type, p.ne, std::move(bytes)));
            continue;
        }
        auto pool = std::make_shared<BlockPool>(p.type, p.stddev, *rng);
        pools.push_back(pool);
        STRATA_TRY(writer.add_tensor_generator(p.name, p.type, p.ne, [pool, rng, done, total, progress](uint8_t* dst, uint64_t n) {
            pool->fill(dst, n, *rng);
            *done += n;
            if (progress) progress(*done, total);
        }));
    }
    STRATA_TRY(writer.write(path));
    if (progress) progress(total, total);
    return Status::ok();
}

}  // namespace strata
