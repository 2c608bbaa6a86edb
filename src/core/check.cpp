#include "core/check.h"

#include <cstdio>
#include <cstdlib>

namespace strata::detail {

void check_failed(const char* file, int line, const char* condition, const char* message) {
    std::fprintf(stderr, "strata: internal error at %s:%d: check `%s` failed: %s\n", file, line, condition,
                 message ? message : "");
    std::fflush(stderr);
    std::abort();
}

}  // namespace strata::detail
