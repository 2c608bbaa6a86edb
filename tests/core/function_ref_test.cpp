// FunctionRef (core/function_ref.h): calls the callable it refers to, with its arguments and
// result, and never copies it — which is what lets ThreadPool::parallel_for take a lambda with
// many captures without allocating.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/function_ref.h"

namespace strata {
namespace {

int apply(FunctionRef<int(int, int)> fn, int a, int b) { return fn(a, b); }

struct CountsCopies {
    int* copies;
    int* calls;
    CountsCopies(int* c, int* k) : copies(c), calls(k) {}
    CountsCopies(const CountsCopies& o) : copies(o.copies), calls(o.calls) { ++*copies; }
    int operator()(int a, int b) {
        ++*calls;
        return a * b;
    }
};

TEST(FunctionRef, CallsTheReferencedCallableWithoutCopyingIt) {
    int copies = 0, calls = 0;
    CountsCopies fn(&copies, &calls);
    EXPECT_EQ(apply(fn, 6, 7), 42);
    EXPECT_EQ(apply(fn, 2, 3), 6);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(copies, 0);
}

TEST(FunctionRef, SeesTheCapturesOfALambdaAsTheyAreAtTheCall) {
    int64_t a = 1, b = 2, c = 3, d = 4;  // more captures than std::function stores without allocating
    const auto sum = [&](int x, int y) { return static_cast<int>(a + b + c + d) + x + y; };
    EXPECT_EQ(apply(sum, 10, 20), 40);
    d = 40;
    EXPECT_EQ(apply(sum, 0, 0), 46);
}

}  // namespace
}  // namespace strata
