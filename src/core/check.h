#pragma once
// Invariant checks: a failed check is a bug in Strata, not bad input. It prints file:line and
// aborts. Bad input (files, requests, flags) is reported through Status instead (core/status.h).
//
//   STRATA_CHECK(n % block == 0, "row length must be a multiple of the block size");

namespace strata::detail {
[[noreturn]] void check_failed(const char* file, int line, const char* condition, const char* message);
}

#define STRATA_CHECK(cond, message)                                                   \
    do {                                                                              \
        if (!(cond)) ::strata::detail::check_failed(__FILE__, __LINE__, #cond, message); \
    } while (0)
