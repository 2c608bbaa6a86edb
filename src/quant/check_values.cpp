#include "quant/check_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "quant/traits.h"

namespace strata {

std::string ValueFault::describe(uint32_t block_size) const {
    if (block_size == 1) return fmt::format("{}: row {}, value {} is {}", tensor, row, value, nan ? "NaN" : "infinite");
    const int64_t first = block * block_size, last = first + block_size - 1;
    return fmt::format("{}: row {}, block {} (values {}-{}) dequantizes to {}", tensor, row, block, first, last,
                       nan ? "NaN" : "infinity");
}

ValueCheck check_tensor_values(const GgufFile& file, ThreadPool& pool,
                               const std::function<void(uint64_t, uint64_t)>& progress) {
    ValueCheck check;
    uint64_t total = 0, done = 0;
    for (const GgufTensorInfo& t : file.tensors()) total += t.n_bytes;
    for (const GgufTensorInfo& t : file.tensors()) {
        const QuantTraits* traits = find_quant_traits(t.type);
        const int64_t rows = static_cast<int64_t>(t.rows());
        if (!traits || rows == 0) {
            ++check.tensors_skipped;
            done += t.n_bytes;
            continue;
        }
        ++check.tensors_checked;
        const uint64_t done_before = done;
        const int64_t width = static_cast<int64_t>(t.ne[0]);
        const uint64_t row_bytes = t.n_bytes / static_cast<uint64_t>(rows);
        const uint8_t* data = file.tensor_data(t);
        // Rows in pieces of ~64 MiB, so the progress bar moves on tensors of many GB.
        const int64_t rows_per_piece = std::max<int64_t>(1, static_cast<int64_t>((uint64_t(64) << 20) / std::max<uint64_t>(row_bytes, 1)));
        ValueFault first;
        first.row = std::numeric_limits<int64_t>::max();
        for (int64_t r0 = 0; r0 < rows && first.row == std::numeric_limits<int64_t>::max(); r0 += rows_per_piece) {
            const int64_t r1 = std::min(rows, r0 + rows_per_piece);
            std::vector<ValueFault> per_worker(static_cast<size_t>(pool.size()));
            for (ValueFault& f : per_worker) f.row = std::numeric_limits<int64_t>::max();
            pool.parallel_for(r1 - r0, [&](int64_t begin, int64_t end, int worker) {
                std::vector<float> values(static_cast<size_t>(width));
                ValueFault& mine = per_worker[static_cast<size_t>(worker)];
                for (int64_t r = r0 + begin; r < r0 + end && r < mine.row; ++r) {
                    traits->dequantize_row(data + static_cast<uint64_t>(r) * row_bytes, values.data(), width);
                    for (int64_t i = 0; i < width; ++i) {
                        if (std::isfinite(values[static_cast<size_t>(i)])) continue;
                        mine.row = r;
                        mine.value = i;
                        mine.nan = std::isnan(values[static_cast<size_t>(i)]);
                        break;
                    }
                }
            });
            for (const ValueFault& f : per_worker) {
                if (f.row < first.row) first = f;
            }
            done += static_cast<uint64_t>(r1 - r0) * row_bytes;
            if (progress) progress(done, total);
        }
        if (first.row != std::numeric_limits<int64_t>::max()) {
            first.tensor = t.name;
            first.block = first.value / tensor_type_info(t.type)->block_size;
            check.faults.push_back(first);
        }
        done = done_before + t.n_bytes;
    }
    if (progress) progress(total, total);
    return check;
}

}  // namespace strata
