#include <gtest/gtest.h>

#include "core/status.h"

namespace strata {
namespace {

Result<int> parse_positive(int v) {
    if (v <= 0) return Status::error("value: expected a positive number, got {}", v);
    return v;
}

Status twice(int v, int* out) {
    STRATA_ASSIGN_OR_RETURN(int x, parse_positive(v));
    *out = 2 * x;
    return Status::ok();
}

TEST(Status, ErrorMessagesAreFormatted) {
    Status s = Status::error("bad magic: expected {}, got {}", "GGUF", "GGML");
    EXPECT_FALSE(s);
    EXPECT_EQ(s.message(), "bad magic: expected GGUF, got GGML");
    EXPECT_EQ(s.with_context("model.gguf").message(), "model.gguf: bad magic: expected GGUF, got GGML");
    EXPECT_TRUE(Status::ok().with_context("x").is_ok());
}

TEST(Status, PropagationMacros) {
    int out = 0;
    EXPECT_TRUE(twice(4, &out));
    EXPECT_EQ(out, 8);
    Status s = twice(-1, &out);
    EXPECT_FALSE(s);
    EXPECT_EQ(s.message(), "value: expected a positive number, got -1");
}

TEST(StatusDeathTest, ValueOfAFailedResultAborts) {
    Result<int> r = parse_positive(0);
    EXPECT_DEATH((void)r.value(), "expected a positive number");
}

}  // namespace
}  // namespace strata
