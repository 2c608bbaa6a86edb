// The GPU op self-test's cases (runtime/gpu_op_selftest.h). Built only with a GPU backend; the
// twin gpu_op_selftest_without_gpu.cpp reports the run as skipped. Each family mirrors a case of
// the op-parity suite (tests/gpu/op_parity*_test.cpp) at a size that takes milliseconds, with the
// suite's threshold, and the same CPU reference op.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <random>

#include "backend/cpu/attention.h"
#include "backend/cpu/cpu_context.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_ops.h"
#include "core/fp16.h"
#include "core/nmse.h"
#include "core/thread_pool.h"
#include "kv/kv_cache.h"
#include "model/blocks/moe_routing.h"
#include "model/random_weights.h"
#include "model/weights.h"
#include "quant/traits.h"
#include "runtime/gpu_op_selftest.h"

namespace strata {
namespace {

// Thresholds of the op-parity suite (tests/gpu/): the CPU matmul quantizes its activations to the
// weight's dot type (Q8_0/Q8_K/F16), and the int8 kernel to blocks of 32, so products differ by
// ~1e-5; the other ops differ only in float summation order.
constexpr double kMatmulLimit = 5e-4;
constexpr double kNormLimit = 1e-11;
constexpr double kRopeLimit = 1e-11;
constexpr double kRoutingLimit = 1e-12;
constexpr double kAttentionLimit = 1e-10;

// Scratch slots of the self-test's own context.
constexpr int kQ8Slot = 0;
constexpr int kDecodePlanSlot = 4;  // [4, 6]
constexpr int kBatchPlanSlot = 8;   // [8, 10]
constexpr int kNarrowPlanSlot = 12; // [12, 14]

std::vector<float> random_floats(std::mt19937& rng, size_t n, float scale = 1.0f) {
    return random_normal_floats(rng, n, scale);
}
using HostWeight = RandomWeight;
HostWeight make_weight(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices, std::mt19937& rng) {
    return make_random_weight(type, n_in, n_out, n_matrices, rng);
}

// Device memory for one family, returned to the pool when the family ends. A refused allocation
// is remembered (ok() turns false) instead of aborting: the family allocates everything first and
// reports the failure without launching anything.
class DeviceScope {
public:
    explicit DeviceScope(gpu::GpuContext& ctx) : ctx_(ctx) {}
    bool ok() const { return error_.empty(); }
    const std::string& error() const { return error_; }

    template <typename T> T* upload(const std::vector<T>& host) {
        T* p = static_cast<T*>(allocate(host.size() * sizeof(T)));
        if (p && !host.empty()) {
            ctx_.upload(p, host.data(), host.size() * sizeof(T));
            ctx_.synchronize();  // the host vector may be a temporary
        }
        return p;
    }
    template <typename T> T* zeros(size_t n) {
        T* p = static_cast<T*>(allocate(n * sizeof(T)));
        if (p) gpu::memset_async(p, 0, n * sizeof(T), ctx_.stream());
        return p;
    }
    gpu::DeviceWeight upload(const HostWeight& w) {
        gpu::DeviceWeight d;
        d.data = upload(w.bytes);
        d.type = w.view.type;
        for (int i = 0; i < 4; ++i) d.ne[i] = w.view.ne[i];
        d.row_bytes = w.view.row_bytes;
        return d;
    }
    // Waits for the queued work, then copies back.
    template <typename T> std::vector<T> download(const T* p, size_t n) {
        std::vector<T> host(n);
        ctx_.download(host.data(), p, n * sizeof(T));
        ctx_.synchronize();
        return host;
    }

private:
    void* allocate(uint64_t bytes) {
        std::string why;
        gpu::DeviceBuffer b = ctx_.pool().allocate(std::max<uint64_t>(bytes, 1), &why);
        if (!b) {
            if (error_.empty()) error_ = "device allocation of " + std::to_string(bytes) + " bytes failed: " + why;
            return nullptr;
        }
        void* p = b.data();
        keep_.push_back(std::move(b));
        return p;
    }
    gpu::GpuContext& ctx_;
    std::vector<gpu::DeviceBuffer> keep_;
    std::string error_;
};

struct Env {
    gpu::GpuContext& gpu;
    CpuContext& cpu;
};

// ---- quantized matmul ---------------------------------------------------------------------------
// A decode row through the int8 kernel (gpu_quantize_q8 + gpu_matmul with its rows) and through the
// float kernel, and a 40-token batch (from kGpuTiledMinTokens: the shared-memory tiled kernel).
GpuOpCheck matmul_family(TensorType type, const Env& env, uint32_t seed) {
    const int64_t n_in = 512, n_out = 96, n_batch = 40;
    const std::string name = fmt::format("matmul {} [{} -> {}]", tensor_type_name(type), n_in, n_out);
    if (!gpu::gpu_supports_type(type)) return failed_gpu_op_check(name, kMatmulLimit, "no GPU kernel reads this type");
    std::mt19937 rng(seed);
    const HostWeight w = make_weight(type, n_in, n_out, 1, rng);
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(n_batch * n_in));
    std::vector<float> want_row(static_cast<size_t>(n_out)), want_batch(static_cast<size_t>(n_batch * n_out));
    cpu_matmul(w.view, 0, x.data(), 1, want_row.data(), env.cpu);
    cpu_matmul(w.view, 0, x.data(), n_batch, want_batch.data(), env.cpu);

    DeviceScope dev(env.gpu);
    const gpu::DeviceWeight dw = dev.upload(w);
    const float* dx = dev.upload(x);
    float* y_q8 = dev.zeros<float>(want_row.size());
    float* y_row = dev.zeros<float>(want_row.size());
    float* y_batch = dev.zeros<float>(want_batch.size());
    if (!dev.ok()) return failed_gpu_op_check(name, kMatmulLimit, dev.error());

    std::vector<GpuOpCase> cases;
    if (gpu::gpu_matvec_takes_q8(dw)) {
        const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(dx, 1, n_in, kQ8Slot, env.gpu);
        gpu::gpu_matmul(dw, 0, dx, 1, y_q8, env.gpu, &xq);
        cases.push_back({"decode int8", normalized_mse(dev.download(y_q8, want_row.size()), want_row)});
    }
    gpu::gpu_matmul(dw, 0, dx, 1, y_row, env.gpu);
    cases.push_back({"decode f32", normalized_mse(dev.download(y_row, want_row.size()), want_row)});
    gpu::gpu_matmul(dw, 0, dx, n_batch, y_batch, env.gpu);
    cases.push_back({fmt::format("batch {} tiled", n_batch), normalized_mse(dev.download(y_batch, want_batch.size()), want_batch)});
    return make_gpu_op_check(name, kMatmulLimit, cases);
}

// ---- RMS norm ----------------------------------------------------------------------------------
GpuOpCheck rms_norm_family(const Env& env, uint32_t seed) {
    const std::string name = "rms_norm";
    std::mt19937 rng(seed);
    struct Shape { int64_t rows, n; bool weight; };
    std::vector<GpuOpCase> cases;
    for (const Shape s : {Shape{4, 1024, true}, Shape{2, 4096, false}}) {
        const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.rows * s.n), 3.0f);
        const std::vector<float> w = random_floats(rng, static_cast<size_t>(s.n));
        std::vector<float> want(x.size());
        cpu_rms_norm(x.data(), s.weight ? w.data() : nullptr, s.rows, s.n, 1e-6f, want.data());
        DeviceScope dev(env.gpu);
        const float* dx = dev.upload(x);
        const float* dw = s.weight ? dev.upload(w) : nullptr;
        float* out = dev.zeros<float>(x.size());
        if (!dev.ok()) return failed_gpu_op_check(name, kNormLimit, dev.error());
        gpu::gpu_rms_norm(dx, dw, s.rows, s.n, 1e-6f, out, env.gpu);
        cases.push_back({fmt::format("[{} x {}]{}", s.rows, s.n, s.weight ? "" : " no weight"),
                         normalized_mse(dev.download(out, x.size()), want)});
    }
    return make_gpu_op_check(name, kNormLimit, cases);
}

// ---- rope --------------------------------------------------------------------------------------
GpuOpCheck rope_family(const Env& env, uint32_t seed) {
    const std::string name = "rope";
    std::mt19937 rng(seed);
    struct Case { RopeStyle style; int64_t head_dim, rope_dims, n_head; float base; };
    const std::vector<int32_t> positions = {0, 1, 7, 255, 4095};
    const int64_t n = static_cast<int64_t>(positions.size());
    std::vector<GpuOpCase> cases;
    for (const Case c : {Case{RopeStyle::Normal, 64, 64, 4, 10000.0f}, Case{RopeStyle::Neox, 128, 64, 4, 1e6f}}) {
        const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * c.n_head * c.head_dim));
        std::vector<float> want = x;
        cpu_rope(want.data(), n, c.n_head, RopeParams{c.style, c.head_dim, c.rope_dims, c.base}, positions.data());
        DeviceScope dev(env.gpu);
        float* dx = dev.upload(x);
        const int32_t* dpos = dev.upload(positions);
        if (!dev.ok()) return failed_gpu_op_check(name, kRopeLimit, dev.error());
        gpu::gpu_rope(dx, n, c.n_head, gpu::GpuRope{c.style == RopeStyle::Neox, c.head_dim, c.rope_dims, c.base}, dpos, env.gpu);
        cases.push_back({fmt::format("{} head {} rotating {}", c.style == RopeStyle::Neox ? "neox" : "normal", c.head_dim,
                                     c.rope_dims),
                         normalized_mse(dev.download(dx, x.size()), want)});
    }
    return make_gpu_op_check(name, kRopeLimit, cases);
}

// ---- mixture of experts ------------------------------------------------------------------------
// The CPU block's routing (route_softmax_topk, renormalized); probs keeps each token's softmax
// for judging near-ties.
void cpu_route(const std::vector<float>& logits, int64_t n_tokens, int64_t n_exp, int64_t k, std::vector<int32_t>& ids,
               std::vector<float>& weights, std::vector<float>& probs) {
    ids.assign(static_cast<size_t>(n_tokens * k), 0);
    weights.assign(static_cast<size_t>(n_tokens * k), 0.0f);
    probs = logits;
    route_softmax_topk(probs.data(), n_tokens, n_exp, k, true, ids.data(), weights.data());
}

// Expert ids the GPU chose that differ from the CPU's: out of range, or a different expert whose
// probability is not a near-tie (within float rounding) of the CPU's choice.
int64_t routing_mismatches(const std::vector<int32_t>& got, const std::vector<int32_t>& want, const std::vector<float>& probs,
                           int64_t n_exp, int64_t k) {
    int64_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] == want[i]) continue;
        if (got[i] < 0 || got[i] >= n_exp) {
            ++bad;
            continue;
        }
        const float* p = probs.data() + static_cast<int64_t>(i) / k * n_exp;
        if (std::fabs(p[got[i]] - p[want[i]]) > 1e-6f * std::max(p[want[i]], 1e-30f)) ++bad;
    }
    return bad;
}

// y[p] = W_{ids[p]} · x[p / per_row] on the CPU, one product per pair.
std::vector<float> cpu_expert_products(const HostWeight& w, const std::vector<int32_t>& ids, const std::vector<float>& x,
                                       int64_t per_row, CpuContext& cpu) {
    const int64_t n_in = w.view.ne[0], n_out = w.view.ne[1];
    std::vector<float> y(ids.size() * static_cast<size_t>(n_out));
    for (size_t p = 0; p < ids.size(); ++p) {
        const int32_t e = std::clamp<int32_t>(ids[p], 0, static_cast<int32_t>(w.view.ne[2] - 1));
        cpu_matmul(w.view, e, x.data() + static_cast<int64_t>(p) / per_row * n_in, 1, y.data() + p * static_cast<size_t>(n_out),
                   cpu);
    }
    return y;
}

// Routing (one token through the decode op that also writes its plan, and a 40-token batch) and
// expert matmuls through the plans: the decode plan with int8 activations, the batch's plan of
// gpu_moe_tile_columns width (wide tiles: the tiled kernel), and a narrow plan with one input row
// per pair (as the down projection) through the int8 kernel.
std::vector<GpuOpCheck> moe_family(const Env& env, uint32_t seed) {
    const int64_t n_exp = 8, k = 4, n_batch = 40, n_in = 256, n_out = 128;
    const TensorType type = TensorType::Q4_K;
    const std::string route_name = fmt::format("moe routing softmax top {} of {}", k, n_exp);
    const std::string expert_name = fmt::format("moe experts {} [{} -> {}]x{}", tensor_type_name(type), n_in, n_out, n_exp);
    std::mt19937 rng(seed);
    const std::vector<float> logits1 = random_floats(rng, static_cast<size_t>(n_exp), 2.0f);
    const std::vector<float> logits = random_floats(rng, static_cast<size_t>(n_batch * n_exp), 2.0f);
    const HostWeight w = make_weight(type, n_in, n_out, n_exp, rng);
    const std::vector<float> x1 = random_floats(rng, static_cast<size_t>(n_in));
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(n_batch * n_in));
    const std::vector<float> x_pairs = random_floats(rng, static_cast<size_t>(n_batch * k * n_in));
    std::vector<int32_t> want_ids1, want_ids;
    std::vector<float> want_w1, want_w, probs1, probs;
    cpu_route(logits1, 1, n_exp, k, want_ids1, want_w1, probs1);
    cpu_route(logits, n_batch, n_exp, k, want_ids, want_w, probs);

    DeviceScope dev(env.gpu);
    const float* d_logits1 = dev.upload(logits1);
    const float* d_logits = dev.upload(logits);
    const gpu::DeviceWeight dw = dev.upload(w);
    const float* dx1 = dev.upload(x1);
    const float* dx = dev.upload(x);
    const float* dx_pairs = dev.upload(x_pairs);
    int32_t* ids1 = dev.zeros<int32_t>(static_cast<size_t>(k));
    float* w1 = dev.zeros<float>(static_cast<size_t>(k));
    int32_t* ids = dev.zeros<int32_t>(static_cast<size_t>(n_batch * k));
    float* wb = dev.zeros<float>(static_cast<size_t>(n_batch * k));
    float* y1 = dev.zeros<float>(static_cast<size_t>(k * n_out));
    float* y = dev.zeros<float>(static_cast<size_t>(n_batch * k * n_out));
    float* y_pairs = dev.zeros<float>(static_cast<size_t>(n_batch * k * n_out));
    if (!dev.ok()) return {failed_gpu_op_check(route_name, kRoutingLimit, dev.error()),
                           failed_gpu_op_check(expert_name, kMatmulLimit, dev.error())};

    // Routing.
    const gpu::MoePlan plan1 = gpu::gpu_moe_route_plan_single(d_logits1, n_exp, k, true, ids1, w1, kDecodePlanSlot, env.gpu);
    const std::vector<int32_t> got_ids1 = dev.download(ids1, static_cast<size_t>(k));
    const std::vector<float> got_w1 = dev.download(w1, static_cast<size_t>(k));
    gpu::gpu_moe_route_softmax_topk(d_logits, n_batch, n_exp, k, true, ids, wb, env.gpu);
    const std::vector<int32_t> got_ids = dev.download(ids, static_cast<size_t>(n_batch * k));
    const std::vector<float> got_w = dev.download(wb, static_cast<size_t>(n_batch * k));
    const int64_t bad = routing_mismatches(got_ids1, want_ids1, probs1, n_exp, k) + routing_mismatches(got_ids, want_ids, probs, n_exp, k);
    std::vector<GpuOpCheck> checks;
    checks.push_back(make_gpu_op_check(route_name, kRoutingLimit,
                                       {{"decode weights", normalized_mse(got_w1, want_w1)},
                                        {fmt::format("batch {} weights", n_batch), normalized_mse(got_w, want_w)}},
                                       bad ? fmt::format("{} expert ids differ from the CPU's", bad) : std::string()));

    // Expert products, against the CPU over the ids the GPU chose (so a routing near-tie does not
    // count twice).
    std::vector<GpuOpCase> cases;
    const int64_t pairs = n_batch * k;
    {
        const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(dx1, 1, n_in, kQ8Slot, env.gpu);
        gpu::gpu_matmul_experts(dw, plan1, dx1, k, y1, env.gpu, &xq);
        cases.push_back({"decode int8", normalized_mse(dev.download(y1, static_cast<size_t>(k * n_out)),
                                                    cpu_expert_products(w, got_ids1, x1, k, env.cpu))});
    }
    {
        const int width = gpu::gpu_moe_tile_columns(pairs, n_exp, dw, dw);
        const gpu::MoePlan plan = gpu::gpu_moe_plan(ids, pairs, n_exp, kBatchPlanSlot, env.gpu, width);
        gpu::gpu_matmul_experts(dw, plan, dx, k, y, env.gpu);
        cases.push_back({fmt::format("batch {} tiles of {}", n_batch, width),
                         normalized_mse(dev.download(y, static_cast<size_t>(pairs * n_out)),
                                     cpu_expert_products(w, got_ids, x, k, env.cpu))});
    }
    {
        const gpu::MoePlan plan = gpu::gpu_moe_plan(ids, pairs, n_exp, kNarrowPlanSlot, env.gpu, gpu::kGpuMatmulColumns);
        const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(dx_pairs, pairs, n_in, kQ8Slot, env.gpu);
        gpu::gpu_matmul_experts(dw, plan, dx_pairs, 1, y_pairs, env.gpu, &xq);
        cases.push_back({fmt::format("batch {} per pair int8", n_batch),
                         normalized_mse(dev.download(y_pairs, static_cast<size_t>(pairs * n_out)),
                                     cpu_expert_products(w, got_ids, x_pairs, 1, env.cpu))});
    }
    checks.push_back(make_gpu_op_check(expert_name, kMatmulLimit, cases));
    return checks;
}

// ---- attention ---------------------------------------------------------------------------------
// Grouped-query attention over an f16 cache of 300 positions: one decode token at the end (host
// position, and positions read on the device as a captured decode step does: split-K), and a
// 40-token prompt batch continuing a cache of 24 (flash tiles). The reference cache holds the same
// f16-rounded rows, so only the kernels' arithmetic is compared.
GpuOpCheck attention_family(const Env& env, uint32_t seed) {
    const int64_t n_head = 16, n_head_kv = 4, hd = 128, n_ctx = 300, n_prompt = 40, prompt_pos0 = 24;
    const int64_t kv_dim = n_head_kv * hd;
    const std::string name = fmt::format("attention f16 KV heads {}/{} dim {}", n_head, n_head_kv, hd);
    std::mt19937 rng(seed);
    std::vector<float> keys = random_floats(rng, static_cast<size_t>(n_ctx * kv_dim));
    std::vector<float> values = random_floats(rng, static_cast<size_t>(n_ctx * kv_dim));
    for (float& v : keys) v = fp16_to_fp32(fp32_to_fp16(v));
    for (float& v : values) v = fp16_to_fp32(fp32_to_fp16(v));
    const std::vector<float> q1 = random_floats(rng, static_cast<size_t>(n_head * hd));
    const std::vector<float> qp = random_floats(rng, static_cast<size_t>(n_prompt * n_head * hd));
    const std::vector<int32_t> position1 = {static_cast<int32_t>(n_ctx - 1)};

    KvCache kv(1, n_ctx, kv_dim, kv_dim);
    std::copy(keys.begin(), keys.end(), kv.keys(0, 0));
    std::copy(values.begin(), values.end(), kv.values(0, 0));
    AttentionParams p{n_head, n_head_kv, hd, hd, 1.0f / std::sqrt(static_cast<float>(hd))};
    std::vector<float> want1(q1.size()), wantp(qp.size());
    cpu_attention(q1.data(), kv, 0, 1, n_ctx - 1, p, want1.data(), env.cpu);
    cpu_attention(qp.data(), kv, 0, n_prompt, prompt_pos0, p, wantp.data(), env.cpu);

    std::string error;
    gpu::GpuKvCache cache(env.gpu.pool(), 1, n_ctx, kv_dim, kv_dim, KvCacheType::F16, &error);
    if (!cache.ok()) return failed_gpu_op_check(name, kAttentionLimit, "device KV cache: " + error);
    DeviceScope dev(env.gpu);
    const float* dk = dev.upload(keys);
    const float* dv = dev.upload(values);
    const float* dq1 = dev.upload(q1);
    const float* dqp = dev.upload(qp);
    const int32_t* dpos = dev.upload(position1);
    float* out1 = dev.zeros<float>(want1.size());
    float* out_at = dev.zeros<float>(want1.size());
    float* outp = dev.zeros<float>(wantp.size());
    if (!dev.ok()) return failed_gpu_op_check(name, kAttentionLimit, dev.error());

    gpu::gpu_kv_store(dk, dv, n_ctx, 0, cache, 0, env.gpu);
    gpu::GpuAttentionParams gp;
    gp.n_head = n_head, gp.n_head_kv = n_head_kv, gp.head_dim_k = hd, gp.head_dim_v = hd, gp.scale = p.scale;
    std::vector<GpuOpCase> cases;
    gpu::gpu_attention(dq1, cache, 0, 1, n_ctx - 1, gp, out1, env.gpu);
    cases.push_back({fmt::format("decode over {} keys", n_ctx), normalized_mse(dev.download(out1, want1.size()), want1)});
    gpu::gpu_attention_at(dq1, cache, 0, 1, dpos, gp, out_at, env.gpu);
    cases.push_back({"decode, device positions", normalized_mse(dev.download(out_at, want1.size()), want1)});
    gpu::gpu_attention(dqp, cache, 0, n_prompt, prompt_pos0, gp, outp, env.gpu);
    cases.push_back({fmt::format("prompt {} at {}", n_prompt, prompt_pos0), normalized_mse(dev.download(outp, wantp.size()), wantp)});
    return make_gpu_op_check(name, kAttentionLimit, cases);
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

GpuOpSelftestReport run_gpu_op_selftest(const GpuOpSelftestOptions& options) {
    GpuOpSelftestReport report;
    const std::string runtime = gpu::runtime_name() ? gpu::runtime_name() : "";
    if (!options.runtime.empty() && lower(options.runtime) != lower(runtime)) {
        report.skipped_reason = fmt::format("this build's kernels run on {}, the card on {}", runtime, options.runtime);
        return report;
    }
    std::vector<gpu::DeviceInfo> devices;
    std::string why;
    if (!gpu::find_devices(&devices, &why)) {
        report.skipped_reason = why;
        return report;
    }
    const auto device = std::find_if(devices.begin(), devices.end(), [&](const gpu::DeviceInfo& d) { return d.ordinal == options.ordinal; });
    report.ran = true;
    if (device == devices.end()) {
        report.checks.push_back(failed_gpu_op_check(
            "GPU ops", 0.0, fmt::format("{} device {} is not among the {} this process sees", runtime, options.ordinal, devices.size())));
        return report;
    }

    gpu::DevicePool pool(options.ordinal);
    gpu::GpuContext ctx(options.ordinal, pool);
    ThreadPool threads(ThreadPool::Options{.threads = std::max(1, options.cpu_threads)});
    CpuContext cpu(threads);
    const Env env{ctx, cpu};
    uint32_t family = 0;
    for (TensorType type : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0, TensorType::F16}) {
        report.checks.push_back(matmul_family(type, env, options.seed + family++));
    }
    report.checks.push_back(rms_norm_family(env, options.seed + family++));
    report.checks.push_back(rope_family(env, options.seed + family++));
    for (GpuOpCheck& c : moe_family(env, options.seed + family++)) report.checks.push_back(std::move(c));
    report.checks.push_back(attention_family(env, options.seed + family++));
    ctx.synchronize();
    return report;
}

}  // namespace strata
