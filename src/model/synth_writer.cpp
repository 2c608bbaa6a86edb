#include "model/synth_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>

#include "gguf/writer.h"
#include "model/synth_blocks.h"
#include "quant/traits.h"

namespace strata {

namespace {

bool is_float_type(TensorType t) { return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16; }

// Float tensors are drawn value by value, row by row, and converted with the type's quantizer
// (a rounding for F16/BF16); with Router, each row (an expert) has its popularity scale.
struct FloatRows {
    SynthTensor t;
    std::mt19937_64 rng;
    std::vector<float> row_scale;  // Router: per expert row
    uint64_t next_row = 0;

    void fill(uint8_t* dst, uint64_t n_bytes) {
        const uint64_t cols = t.ne[0];
        const uint64_t row_bytes = tensor_type_info(t.type)->row_bytes(cols);
        std::vector<float> v(cols);
        std::normal_distribution<float> gauss(t.fill == SynthFill::Gaussian ? t.a : 0.0f, t.b);
        std::uniform_real_distribution<float> uniform(t.a, t.b);
        for (uint64_t off = 0; off < n_bytes; off += row_bytes, ++next_row) {
            for (float& x : v) x = t.fill == SynthFill::Uniform ? uniform(rng) : gauss(rng);
            if (!row_scale.empty()) {
                const float s = row_scale[next_row % row_scale.size()];
                for (float& x : v) x *= s;
            }
            quant_traits(t.type).quantize_row(v.data(), dst + off, static_cast<int64_t>(cols));
        }
    }
};

// I32 tensors of ids: each value drawn uniformly from [a, b).
struct IndexValues {
    SynthTensor t;
    std::mt19937_64 rng;

    void fill(uint8_t* dst, uint64_t n_bytes) {
        std::uniform_int_distribution<int32_t> pick(static_cast<int32_t>(t.a), static_cast<int32_t>(t.b) - 1);
        for (uint64_t off = 0; off + sizeof(int32_t) <= n_bytes; off += sizeof(int32_t)) {
            const int32_t v = pick(rng);
            std::memcpy(dst + off, &v, sizeof(v));
        }
    }
};

Status check_plan(const SynthTensor& t) {
    if (t.fill == SynthFill::Indices || t.type == TensorType::I32) {
        if (t.fill != SynthFill::Indices || t.type != TensorType::I32 || !(t.a < t.b)) {
            return Status::error("synth: tensor {}: ids are I32 tensors drawn from a non-empty range", t.name);
        }
        return Status::ok();
    }
    if (!synth_can_write(t.type)) {
        return Status::error("synth: tensor {}: Strata cannot write {} weights (use a type with a quantizer, e.g. "
                             "Q4_K, Q2_0, or one of the i-quants IQ1_S, IQ2_XXS .. IQ4_XS)",
                             t.name, tensor_type_name(t.type));
    }
    if (!is_float_type(t.type) && (t.fill != SynthFill::Gaussian || t.a != 0.0f)) {
        return Status::error("synth: tensor {}: a {} tensor takes zero-mean Gaussian values only", t.name,
                             tensor_type_name(t.type));
    }
    return Status::ok();
}

}  // namespace

uint64_t SynthTensor::elements() const {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    return n;
}

uint64_t SynthTensor::bytes() const {
    const TensorTypeInfo* info = tensor_type_info(type);
    return ne.empty() || !info ? 0 : info->row_bytes(ne[0]) * (elements() / std::max<uint64_t>(ne[0], 1));
}

const GgufValue* SynthFile::find(const std::string& key) const {
    for (const auto& [k, v] : metadata) {
        if (k == key) return &v;
    }
    return nullptr;
}

uint64_t SynthFile::tensor_bytes() const {
    uint64_t n = 0;
    for (const SynthTensor& t : tensors) n += t.bytes();
    return n;
}

Status write_synth_files(const std::vector<SynthFile>& files, const std::vector<std::string>& paths,
                         const SynthWriteOptions& options, const SynthProgress& progress) {
    if (files.size() != paths.size()) {
        return Status::error("synth: expected a path per file ({}), got {}", files.size(), paths.size());
    }
    uint64_t total = 0;
    for (const SynthFile& f : files) {
        for (const SynthTensor& t : f.tensors) STRATA_TRY(check_plan(t));
        total += f.tensor_bytes();
    }
    auto done = std::make_shared<uint64_t>(0);
    // Pools are shared by the tensors of one type and spread (a pool is ~1 MB, a model has ~1,200
    // tensors); each is drawn from its own seed, so it does not depend on which tensor came first.
    std::map<std::pair<TensorType, float>, std::shared_ptr<SynthBlockPool>> pools;
    for (size_t fi = 0; fi < files.size(); ++fi) {
        GgufWriter writer;
        for (const auto& [key, value] : files[fi].metadata) writer.set(key, value);
        for (size_t ti = 0; ti < files[fi].tensors.size(); ++ti) {
            const SynthTensor& t = files[fi].tensors[ti];
            // One generator per tensor: seed, file and position mixed through seed_seq.
            std::seed_seq seq{static_cast<uint32_t>(options.seed), static_cast<uint32_t>(options.seed >> 32),
                              static_cast<uint32_t>(fi), static_cast<uint32_t>(ti)};
            std::mt19937_64 rng(seq);
            auto count = [done, total, progress](uint64_t n) {
                *done += n;
                if (progress) progress(*done, total);
            };
            if (t.fill == SynthFill::Indices) {
                auto values = std::make_shared<IndexValues>(IndexValues{t, rng});
                STRATA_TRY(writer.add_tensor_generator(t.name, t.type, t.ne, [values, count](uint8_t* dst, uint64_t n) {
                    values->fill(dst, n);
                    count(n);
                }));
            } else if (is_float_type(t.type)) {
                auto rows = std::make_shared<FloatRows>(FloatRows{t, rng, {}, 0});
                if (t.fill == SynthFill::Router && options.router_skew > 0 && t.ne.size() >= 2) {
                    std::vector<uint32_t> rank(t.ne[1]);
                    std::iota(rank.begin(), rank.end(), 0u);
                    std::shuffle(rank.begin(), rank.end(), rows->rng);
                    for (uint32_t r : rank) {
                        rows->row_scale.push_back(static_cast<float>(std::pow(double(r) + 1.0, -options.router_skew)));
                    }
                }
                STRATA_TRY(writer.add_tensor_generator(t.name, t.type, t.ne, [rows, count](uint8_t* dst, uint64_t n) {
                    rows->fill(dst, n);
                    count(n);
                }));
            } else {
                std::shared_ptr<SynthBlockPool>& pool = pools[{t.type, t.b}];
                if (!pool) {
                    uint32_t spread = 0;
                    std::memcpy(&spread, &t.b, sizeof(spread));
                    std::seed_seq pool_seq{static_cast<uint32_t>(options.seed), static_cast<uint32_t>(t.type), spread};
                    std::mt19937_64 pool_rng(pool_seq);
                    pool = std::make_shared<SynthBlockPool>(t.type, t.b, pool_rng);
                }
                auto state = std::make_shared<std::mt19937_64>(rng);
                STRATA_TRY(writer.add_tensor_generator(t.name, t.type, t.ne, [pool, state, count](uint8_t* dst, uint64_t n) {
                    pool->fill(dst, n, *state);
                    count(n);
                }));
            }
        }
        STRATA_TRY(writer.write(paths[fi]).with_context(paths[fi]));
    }
    if (progress) progress(total, total);
    return Status::ok();
}

}  // namespace strata
