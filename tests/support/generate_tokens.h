#pragma once
// A session's prompt, then `count` tokens each sampled by a fresh sampler of `params` and appended:
// the generation loop of runtime/generate.cpp without the text, for tests that compare two ways of
// sampling token by token. Appends that fail are test failures.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/sampler.h"
#include "runtime/session.h"

namespace strata::test {

inline std::vector<int32_t> generate_tokens(Session& session, const SamplingParams& params,
                                            const std::vector<int32_t>& prompt, int count) {
    Sampler sampler(params);
    std::vector<int32_t> tokens;
    EXPECT_TRUE(session.append(prompt));
    for (int32_t t : prompt) sampler.accept(t);
    for (int step = 0; step < count; ++step) {
        const int32_t next = session.sample(sampler);
        sampler.accept(next);
        tokens.push_back(next);
        EXPECT_TRUE(session.append(std::vector<int32_t>{next}));
    }
    return tokens;
}

}  // namespace strata::test
