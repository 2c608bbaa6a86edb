#pragma once
// Waiting by polling, for hand-overs between threads that come tens of microseconds apart (a
// futex sleep and wake-up costs about as much). spin_until polls `done` until it returns true or
// `spin_time` passes, handing the core over between polls, and says which; the caller then
// sleeps on a condition variable.
//
//   if (!spin_until([&] { return flag.load(); }, std::chrono::microseconds(500))) { /* sleep */ }

#include <chrono>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace strata {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

template <typename Done>
bool spin_until(Done done, std::chrono::microseconds spin_time) {
    if (spin_time.count() <= 0) return done();
    const auto deadline = std::chrono::steady_clock::now() + spin_time;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (done()) return true;
            cpu_relax();
        }
        if (std::chrono::steady_clock::now() > deadline) return false;
        // On a machine with other runnable work, hand the core over between polls (it may be the
        // thread we are waiting for); with nothing else runnable this returns at once.
        std::this_thread::yield();
    }
}

}  // namespace strata
