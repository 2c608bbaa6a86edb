#include "cli/progress.h"

#if defined(_WIN32)
#include <io.h>
#define STRATA_ISATTY_STDERR() (_isatty(_fileno(stderr)) != 0)
#else
#include <unistd.h>
#define STRATA_ISATTY_STDERR() (isatty(STDERR_FILENO) != 0)
#endif

#include <cstdio>

namespace strata::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), tty_(STRATA_ISATTY_STDERR()), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(uint64_t done, uint64_t total) {
    last_done_ = done;
    last_total_ = total;
    auto now = std::chrono::steady_clock::now();
    if (!tty_ || now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    draw(done, total);
}

void ProgressBar::draw(uint64_t done, uint64_t total) {
    double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    double rate = secs > 0 ? static_cast<double>(done) / secs / 1e6 : 0;
    constexpr int kWidth = 30;
    int filled = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r%s [%s] %5.1f%%  %.1f/%.1f MB  %.0f MB/s  %.0fs", label_.c_str(), bar.c_str(), frac * 100,
                 static_cast<double>(done) / 1e6, static_cast<double>(total) / 1e6, rate, secs);
    std::fflush(stderr);
}

void ProgressBar::finish() {
    if (finished_) return;
    finished_ = true;
    draw(last_done_, last_total_);
    std::fprintf(stderr, "\n");
}

}  // namespace strata::cli
