#pragma once
// Runs this `strata` process again with the vendor's visibility variable set for the GPU(s) it
// chose (device/self_visibility.h): same arguments, same environment plus the variable and the
// marker: by exec on POSIX, as a child process on the same console on Windows (this process then
// exits with the child's code). Returns only when that cannot be done (/proc/self/exe missing,
// exec refused, the child not started), after saying why on stderr — the run then goes on with
// the cards as they are numbered now.
//
//   if (auto plan = visibility_for_self(devices, chosen, user)) rerun_with_visibility(*plan);

#include "device/self_visibility.h"

namespace strata::cli {

void rerun_with_visibility(const SelfVisibility& visibility);

}  // namespace strata::cli
