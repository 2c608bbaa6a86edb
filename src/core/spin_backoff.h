#pragma once
// When to stop polling: a thread that polls before sleeping (core/spin_wait.h) gains only when
// what it waits for comes within the poll. On a machine whose other programs hold cores, the
// thread it waits for is itself waiting for a core, the polls run out one after another, and each
// spends a core those threads could have had. After kFailuresToRest polls in a row that ran out,
// the thread sleeps at once for its next kRestWaits waits, then polls again to see whether the
// machine has freed up. Decided from the outcomes alone (no clock), so tests feed them.
//
//   SpinBackoff backoff;
//   const bool spin = backoff.should_spin();
//   const bool done = spin ? spin_until(ready, spin_time) : ready();
//   backoff.record(spin, done);
//   if (!done) { /* sleep on the condition variable */ }

namespace strata {

class SpinBackoff {
public:
    static constexpr int kFailuresToRest = 8;
    static constexpr int kRestWaits = 256;

    bool should_spin() const { return rest_left_ == 0; }

    // After a wait: whether it polled, and whether the poll saw the wait end.
    void record(bool spun, bool satisfied) {
        if (!spun) {
            if (rest_left_ > 0) --rest_left_;
            return;
        }
        if (satisfied) {
            failures_ = 0;
            return;
        }
        if (++failures_ >= kFailuresToRest) {
            failures_ = 0;
            rest_left_ = kRestWaits;
            ++rests_;
        }
    }

    // How many times polling was stopped (for the pool's statistics).
    int rests() const { return rests_; }

private:
    int failures_ = 0;
    int rest_left_ = 0;
    int rests_ = 0;
};

}  // namespace strata
