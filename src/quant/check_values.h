#pragma once
// Whether a file's weights hold only finite numbers: every row of every tensor of a registered
// type dequantized by the scalar reference and scanned for NaN and infinity. A corrupt download, a
// broken quantizer or a crafted file shows up here by tensor, row and block, before a run turns it
// into NaN logits. Reads every byte of the file, so it is opt-in (`strata inspect --check-values`).
//
//   ThreadPool pool(ThreadPool::Options{});
//   ValueCheck c = check_tensor_values(gguf, pool, progress);   // c.faults: one per bad tensor

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "gguf/reader.h"

namespace strata {

// The first non-finite value of one tensor (lowest row, then lowest position in it).
struct ValueFault {
    std::string tensor;
    int64_t row = 0;
    int64_t value = 0;        // position in the row
    int64_t block = 0;        // the block holding it (value / block size)
    bool nan = false;         // NaN, else ±infinity

    // "blk.3.attn_q.weight: row 17, block 5 (values 160-191) dequantizes to NaN"; for the float
    // types (blocks of one value) "norm.weight: row 0, value 7 is NaN"
    std::string describe(uint32_t block_size) const;
};

struct ValueCheck {
    uint64_t tensors_checked = 0;
    uint64_t tensors_skipped = 0;  // types without a dequantizer (I8..I64, F64)
    std::vector<ValueFault> faults;
};

// `progress` is called with (bytes checked, total bytes) from the calling thread.
ValueCheck check_tensor_values(const GgufFile& file, ThreadPool& pool,
                               const std::function<void(uint64_t done, uint64_t total)>& progress = nullptr);

}  // namespace strata
