#pragma once
// A one-line progress bar on stderr for long work (writing or loading tens of GB). Redraws at
// most ten times a second; prints nothing when stderr is not a terminal except the final line.
//
//   ProgressBar bar("writing");
//   bar.update(done_bytes, total_bytes);
//   bar.finish();

#include <chrono>
#include <cstdint>
#include <string>

namespace strata::cli {

class ProgressBar {
public:
    explicit ProgressBar(std::string label);
    void update(uint64_t done, uint64_t total);
    void finish();

private:
    std::string label_;
    bool tty_;
    bool finished_ = false;
    uint64_t last_done_ = 0, last_total_ = 0;
    std::chrono::steady_clock::time_point start_, last_draw_;
    void draw(uint64_t done, uint64_t total);
};

}  // namespace strata::cli
