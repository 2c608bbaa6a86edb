#pragma once
// Switches read from the environment, for measurements that compare a behaviour with its
// alternative in one binary (STRATA_TIERS_*, STRATA_GPU_*): read once where the object that uses
// them is made, never inside a loop.
//
//   bool flags_on = env_switch_on("STRATA_TIERS_ROUTING_FLAG");   // on unless set to 0
//   bool copied   = env_equals("STRATA_TIERS_PLAN_UPLOAD", "copy");

#include <cstdlib>
#include <cstring>

namespace strata {

// True unless the variable is set to "0": a switch that is on by default.
inline bool env_switch_on(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr || std::strcmp(v, "0") != 0;
}

// True when the variable is set to exactly `value`: an alternative that is off by default.
inline bool env_equals(const char* name, const char* value) {
    const char* v = std::getenv(name);
    return v != nullptr && std::strcmp(v, value) == 0;
}

}  // namespace strata
