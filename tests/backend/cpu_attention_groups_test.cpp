// The CPU attention shares each block of a kv head's rows among the query heads of its group
// (backend/cpu/attention.cpp). Grouping must not change a bit: each query head computed by
// itself, over a cache of its kv head alone, gives the same output, for f32, f16 and q8_0
// caches, decode and prompt batches, several blocks of rows, a sliding window with sinks, and
// pools of 1, 3 and 8 threads (which take the group whole or split).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/attention.h"
#include "core/thread_pool.h"

namespace strata {
namespace {

struct GroupCase {
    AttentionParams p;
    int64_t n_tokens, pos0;
};

// The attention of c over random keys and values, and each query head's attention computed by
// itself: one call per head, over a cache holding only its kv head's rows.
void attend_grouped_and_alone(const GroupCase& c, KvCacheType type, CpuContext& ctx, std::vector<float>& grouped,
                              std::vector<float>& alone) {
    const AttentionParams& p = c.p;
    const int64_t group = p.n_head / p.n_head_kv;
    const int64_t n_kv = c.pos0 + c.n_tokens;
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    KvCache kv(1, n_kv, p.n_head_kv * p.head_dim_k, p.n_head_kv * p.head_dim_v, type);
    std::vector<std::unique_ptr<KvCache>> own;  // per kv head
    for (int64_t h = 0; h < p.n_head_kv; ++h) own.push_back(std::make_unique<KvCache>(1, n_kv, p.head_dim_k, p.head_dim_v, type));
    std::vector<float> k(static_cast<size_t>(p.n_head_kv * p.head_dim_k)), v(static_cast<size_t>(p.n_head_kv * p.head_dim_v));
    for (int64_t j = 0; j < n_kv; ++j) {
        for (auto& x : k) x = normal(rng);
        for (auto& x : v) x = normal(rng);
        kv.store(0, j, k.data(), v.data());
        for (int64_t h = 0; h < p.n_head_kv; ++h) own[h]->store(0, j, k.data() + h * p.head_dim_k, v.data() + h * p.head_dim_v);
    }
    std::vector<float> q(static_cast<size_t>(c.n_tokens * p.n_head * p.head_dim_k));
    for (auto& x : q) x = normal(rng);
    grouped.assign(static_cast<size_t>(c.n_tokens * p.n_head * p.head_dim_v), -1.0f);
    alone.assign(grouped.size(), -2.0f);
    cpu_attention(q.data(), kv, 0, c.n_tokens, c.pos0, p, grouped.data(), ctx);

    AttentionParams one = p;
    one.n_head = one.n_head_kv = 1;
    std::vector<float> qh(static_cast<size_t>(c.n_tokens * p.head_dim_k)), oh(static_cast<size_t>(c.n_tokens * p.head_dim_v));
    for (int64_t h = 0; h < p.n_head; ++h) {
        one.sinks = p.sinks ? p.sinks + h : nullptr;
        for (int64_t t = 0; t < c.n_tokens; ++t) {
            std::copy_n(q.data() + (t * p.n_head + h) * p.head_dim_k, p.head_dim_k, qh.data() + t * p.head_dim_k);
        }
        cpu_attention(qh.data(), *own[h / group], 0, c.n_tokens, c.pos0, one, oh.data(), ctx);
        for (int64_t t = 0; t < c.n_tokens; ++t) {
            std::copy_n(oh.data() + t * p.head_dim_v, p.head_dim_v, alone.data() + (t * p.n_head + h) * p.head_dim_v);
        }
    }
}

TEST(CpuAttentionGroups, SameBitsAsEveryHeadAlone) {
    static const float sinks[8] = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -0.5f, 0.25f, 3.0f};
    std::vector<GroupCase> cases;
    cases.push_back({{8, 2, 64, 64, 0.125f}, 1, 300});    // decode over several blocks of rows
    cases.push_back({{8, 2, 64, 64, 0.125f}, 5, 290});    // a short prompt batch
    cases.push_back({{8, 1, 32, 32, 0.17f}, 1, 1000});    // one kv head for all (MQA)
    GroupCase window{{8, 4, 32, 32, 0.2f}, 3, 400};
    window.p.sinks = sinks;
    window.p.sliding_window = 150;
    cases.push_back(window);
    // Deeper: many blocks of rows, and a sliding window that starts mid-cache.
    cases.push_back({{8, 2, 64, 64, 0.125f}, 1, 2100});
    cases.push_back({{8, 2, 32, 32, 0.125f}, 2, 1500});
    GroupCase deep_window{{8, 4, 32, 32, 0.2f}, 1, 2000};
    deep_window.p.sinks = sinks;
    deep_window.p.sliding_window = 700;  // rows 1301..2000
    cases.push_back(deep_window);
    for (int threads : {1, 3, 8}) {
        ThreadPool pool(ThreadPool::Options{.threads = threads});
        CpuContext ctx(pool);
        for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16, KvCacheType::Q8_0}) {
            for (const GroupCase& c : cases) {
                std::vector<float> grouped, alone;
                attend_grouped_and_alone(c, type, ctx, grouped, alone);
                EXPECT_EQ(std::memcmp(grouped.data(), alone.data(), grouped.size() * sizeof(float)), 0)
                    << threads << " threads, cache " << static_cast<int>(type) << ", heads " << c.p.n_head << "/"
                    << c.p.n_head_kv << ", tokens " << c.n_tokens << " at " << c.pos0;
            }
        }
    }
}

// The attention against a plain double-precision computation of its definition, at a depth of
// many blocks of rows, on one thread and on eight (which split each kv head's group).
TEST(CpuAttentionGroups, MatchesADoublePrecisionReference) {
    const AttentionParams p{8, 2, 64, 64, 0.125f};
    const int64_t n_tokens = 2, pos0 = 1800, n_kv = pos0 + n_tokens;
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    KvCache kv(1, n_kv, p.n_head_kv * p.head_dim_k, p.n_head_kv * p.head_dim_v, KvCacheType::F32);
    std::vector<float> keys(static_cast<size_t>(n_kv * p.n_head_kv * p.head_dim_k)), values(keys.size());
    for (auto& x : keys) x = normal(rng);
    for (auto& x : values) x = normal(rng);
    for (int64_t j = 0; j < n_kv; ++j) {
        kv.store(0, j, keys.data() + j * p.n_head_kv * p.head_dim_k, values.data() + j * p.n_head_kv * p.head_dim_v);
    }
    std::vector<float> q(static_cast<size_t>(n_tokens * p.n_head * p.head_dim_k));
    for (auto& x : q) x = normal(rng);
    std::vector<double> want(static_cast<size_t>(n_tokens * p.n_head * p.head_dim_v), 0.0);
    for (int64_t t = 0; t < n_tokens; ++t) {
        for (int64_t h = 0; h < p.n_head; ++h) {
            const int64_t kvh = h / (p.n_head / p.n_head_kv), rows = pos0 + t + 1;
            std::vector<double> logit(static_cast<size_t>(rows));
            double max = -1e300, sum = 0.0;
            for (int64_t j = 0; j < rows; ++j) {
                double dot = 0.0;
                for (int64_t d = 0; d < p.head_dim_k; ++d) {
                    dot += double(q[(t * p.n_head + h) * p.head_dim_k + d]) * keys[(j * p.n_head_kv + kvh) * p.head_dim_k + d];
                }
                logit[j] = dot * p.scale;
                max = std::max(max, logit[j]);
            }
            for (double& l : logit) sum += (l = std::exp(l - max));
            for (int64_t j = 0; j < rows; ++j) {
                for (int64_t d = 0; d < p.head_dim_v; ++d) {
                    want[(t * p.n_head + h) * p.head_dim_v + d] += logit[j] / sum * values[(j * p.n_head_kv + kvh) * p.head_dim_v + d];
                }
            }
        }
    }
    for (int threads : {1, 8}) {
        ThreadPool pool(ThreadPool::Options{.threads = threads});
        CpuContext ctx(pool);
        std::vector<float> got(want.size(), -9.0f);
        cpu_attention(q.data(), kv, 0, n_tokens, pos0, p, got.data(), ctx);
        double err = 0.0, ref = 0.0;
        for (size_t i = 0; i < want.size(); ++i) {
            err = std::max(err, std::abs(got[i] - want[i]));
            ref = std::max(ref, std::abs(want[i]));
        }
        EXPECT_LT(err, 1e-5 * ref) << threads << " threads: largest error " << err << " against outputs up to " << ref;
    }
}

}  // namespace
}  // namespace strata
