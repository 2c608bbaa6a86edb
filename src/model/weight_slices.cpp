#include "model/weight_slices.h"

#include <cstring>
#include <string>

namespace strata {

namespace {

std::string name_of(const Weight& w) { return w.info ? w.info->name : std::string("(unnamed tensor)"); }

Status check_range(const Weight& w, int64_t begin, int64_t count, int64_t size, const char* what) {
    if (!w) return Status::error("slicing an absent tensor");
    if (begin < 0 || count <= 0 || begin + count > size) {
        return Status::error("tensor {}: {} {}..{} of {} is not a part of it", name_of(w), what, begin, begin + count - 1,
                             size);
    }
    return Status::ok();
}

}  // namespace

Result<Weight> weight_rows(const Weight& w, int64_t begin, int64_t count) {
    STRATA_TRY(check_range(w, begin, count, w.ne[1], "rows"));
    if (w.ne[2] != 1 || w.ne[3] != 1) return Status::error("tensor {}: rows of a stack of matrices", name_of(w));
    Weight part = w;
    part.data = w.row(begin);
    part.ne[1] = count;
    return part;
}

Result<Weight> weight_elements(const Weight& w, int64_t begin, int64_t count) {
    STRATA_TRY(check_range(w, begin, count, w.ne[0], "elements"));
    if (w.type != TensorType::F32 || w.rows() != 1) return Status::error("tensor {}: expected an F32 vector", name_of(w));
    Weight part = w;
    part.data = w.data + static_cast<uint64_t>(begin) * sizeof(float);
    part.ne[0] = count;
    part.row_bytes = static_cast<uint64_t>(count) * sizeof(float);
    return part;
}

Result<Weight> weight_matrices(const Weight& w, int64_t begin, int64_t count) {
    STRATA_TRY(check_range(w, begin, count, w.ne[2], "matrices"));
    if (w.ne[3] != 1) return Status::error("tensor {}: a 4-D tensor", name_of(w));
    Weight part = w;
    part.data = w.matrix(begin);
    part.ne[2] = count;
    return part;
}

Result<Weight> weight_columns(const Weight& w, int64_t begin, int64_t count, std::vector<uint8_t>& storage) {
    STRATA_TRY(check_range(w, begin, count, w.ne[0], "columns"));
    const TensorTypeInfo* info = tensor_type_info(w.type);
    if (!info) return Status::error("tensor {}: unknown type", name_of(w));
    if (!info->row_fits(static_cast<uint64_t>(begin)) || !info->row_fits(static_cast<uint64_t>(count))) {
        return Status::error("tensor {}: columns {}..{} do not fall on {}-value blocks of {}; a tensor split needs "
                             "each GPU's share of this matrix's inputs to be whole blocks (use --split layer)",
                             name_of(w), begin, begin + count - 1, info->block_size, info->name);
    }
    const uint64_t skip = info->row_bytes(static_cast<uint64_t>(begin));
    const uint64_t keep = info->row_bytes(static_cast<uint64_t>(count));
    const int64_t rows = w.rows();
    storage.assign(keep * static_cast<uint64_t>(rows), 0);
    for (int64_t r = 0; r < rows; ++r) std::memcpy(storage.data() + keep * static_cast<uint64_t>(r), w.row(r) + skip, keep);
    Weight part = w;
    part.data = storage.data();
    part.ne[0] = count;
    part.row_bytes = keep;
    return part;
}

}  // namespace strata
