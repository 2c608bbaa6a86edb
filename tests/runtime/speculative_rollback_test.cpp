// Rollback after a verification: a pass of a token and k drafts of which `a` are kept (every a in
// 0..k, k in 1..4) leaves the session, bit for bit, where a fresh session that appended the prompt
// and then the kept tokens stands: the tokens, every KV row up to the position (keys, values and
// qwen4exp's indexer keys), the recurrent state (DeltaNet conv tails and delta-rule states, PLE
// histories), and the logits; and the next token's logits are the fresh session's too.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "runtime/speculative_models.h"

namespace strata {
namespace {

// Every stored byte a position below n_past() of `a` and `b` holds, compared.
void expect_same_kv(const KvCache& a, const KvCache& b, int64_t n_layer, int64_t n_past) {
    ASSERT_EQ(a.type(), b.type());
    for (int64_t il = 0; il < n_layer; ++il) {
        ASSERT_EQ(a.has_layer(il), b.has_layer(il));
        if (!a.has_layer(il)) continue;
        for (int64_t pos = 0; pos < n_past; ++pos) {
            ASSERT_EQ(std::memcmp(a.key_row(il, pos), b.key_row(il, pos), kv_row_bytes(a.type(), a.k_dim())), 0)
                << "key row " << pos << " of layer " << il;
            ASSERT_EQ(std::memcmp(a.value_row(il, pos), b.value_row(il, pos), kv_row_bytes(a.type(), a.v_dim())), 0)
                << "value row " << pos << " of layer " << il;
            if (a.index_key_dim() > 0) {
                ASSERT_EQ(std::memcmp(a.index_key(il, pos), b.index_key(il, pos), a.index_key_dim() * sizeof(float)), 0)
                    << "index key " << pos << " of layer " << il;
            }
        }
    }
}

void expect_same_logits(const Session& a, const Session& b) {
    ASSERT_EQ(std::memcmp(a.logits(), b.logits(), static_cast<size_t>(a.n_vocab()) * sizeof(float)), 0);
}

class SpeculativeRollback : public ::testing::TestWithParam<std::string> {};

TEST_P(SpeculativeRollback, KeepsExactlyTheAcceptedTokensState) {
    const std::string path = test::speculative_model_path(GetParam());
    STRATA_SKIP_IF_MISSING(path);
    test::OpenedModel m = test::open_speculative_test_model(GetParam());
    ASSERT_TRUE(m.model);
    Model& model = *m.model;
    const int32_t n_vocab = static_cast<int32_t>(model.config().n_vocab);
    const int64_t n_layer = model.config().n_layer;
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    std::vector<int32_t> prompt, pass;
    for (int32_t t : {5, 17, 99, 300, 41, 8, 77, 1000, 12}) prompt.push_back(t % n_vocab);
    for (int32_t t : {64, 3, 2000, 555, 9}) pass.push_back(t % n_vocab);
    const SessionOptions options{.n_ctx = 32, .n_batch = 4};
    for (int64_t k = 1; k <= 4; ++k) {
        for (int64_t a = 0; a <= k; ++a) {
            SCOPED_TRACE("k " + std::to_string(k) + ", kept drafts " + std::to_string(a));
            const std::span<const int32_t> verified(pass.data(), static_cast<size_t>(k + 1));
            const std::span<const int32_t> kept(pass.data(), static_cast<size_t>(a + 1));
            Session spec(model, options, pool);
            ASSERT_TRUE(spec.append(prompt));
            ASSERT_TRUE(spec.append_speculative(verified));
            const RecurrentSnapshot before_rollback = spec.recurrent_state().snapshot();
            ASSERT_TRUE(spec.rollback_speculative(a + 1));

            Session fresh(model, SessionOptions{.n_ctx = 32, .n_batch = 32}, pool);
            ASSERT_TRUE(fresh.append(prompt));
            ASSERT_TRUE(fresh.append(kept));

            ASSERT_EQ(spec.n_past(), fresh.n_past());
            EXPECT_EQ(spec.tokens(), fresh.tokens());
            expect_same_kv(spec.kv_cache(), fresh.kv_cache(), n_layer, spec.n_past());
            const RecurrentSnapshot got = spec.recurrent_state().snapshot(), want = fresh.recurrent_state().snapshot();
            EXPECT_EQ(got.n_past, want.n_past);
            EXPECT_TRUE(got.bytes == want.bytes) << "recurrent state";
            // Not vacuous: before the rollback a hybrid model's state held the rejected drafts.
            if (a < k && !want.bytes.empty()) {
                EXPECT_FALSE(before_rollback.bytes == want.bytes);
            }
            expect_same_logits(spec, fresh);

            // And it goes on as the fresh session does.
            const int32_t next[1] = {42 % n_vocab};
            ASSERT_TRUE(spec.append(next));
            ASSERT_TRUE(fresh.append(next));
            expect_same_logits(spec, fresh);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Models, SpeculativeRollback, ::testing::ValuesIn(test::speculative_test_models()),
                         [](const auto& param_info) { return test::model_fixture_label(param_info.param); });

}  // namespace
}  // namespace strata
