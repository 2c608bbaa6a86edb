#pragma once
// Op times summed by name, for the op profiles `strata bench` prints (--gpu-profile from the GPU's
// events, backend/gpu/op_profiler.h; --cpu-profile from host clocks, backend/cpu/cpu_op_profile.h).
//
//   OpTotals totals;  totals.add("matmul", 0.21);  ...  std::vector<OpProfileRow> rows = totals.take();

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace strata {

struct OpProfileRow {
    std::string name;
    uint64_t calls = 0;
    double ms = 0.0;  // the op's time, summed over its calls
};

// In the order the names first appeared (the order of the forward). Thread-safe.
class OpTotals {
public:
    void add(const char* name, double ms) {
        std::lock_guard lock(mutex_);
        auto [it, fresh] = index_.try_emplace(name, rows_.size());
        if (fresh) rows_.push_back(OpProfileRow{name, 0, 0.0});
        rows_[it->second].calls += 1;
        rows_[it->second].ms += ms;
    }
    // The rows so far; the totals start again from zero.
    std::vector<OpProfileRow> take() {
        std::lock_guard lock(mutex_);
        std::vector<OpProfileRow> out = std::move(rows_);
        rows_.clear();
        index_.clear();
        return out;
    }

private:
    std::mutex mutex_;
    std::vector<OpProfileRow> rows_;
    std::unordered_map<std::string, size_t> index_;
};

}  // namespace strata
