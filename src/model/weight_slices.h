#pragma once
// Parts of a weight tensor, for a model sharded over several GPUs by tensor (--split tensor): a
// GPU holds some of a projection's rows (its attention heads of wq/wk/wv, its share of an FFN's
// gate/up), some of its columns (the same heads' inputs of wo, the same share of down), or some of
// a stack's matrices (its experts). Rows and matrices are views of the same bytes; columns are
// copied, each row cut at block boundaries of its quant type.
//
//   Weight mine = weight_rows(w.wq, rank * rows_each, rows_each);
//   std::vector<uint8_t> bytes;
//   STRATA_ASSIGN_OR_RETURN(Weight wo, weight_columns(w.wo, rank * cols_each, cols_each, bytes));

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "model/weights.h"

namespace strata {

// Rows [begin, begin + count) of a matrix (or elements of a vector: a vector is one row of
// ne[0] values; use weight_elements). A view: no bytes copied.
Result<Weight> weight_rows(const Weight& w, int64_t begin, int64_t count);
// Elements [begin, begin + count) of an F32 vector (biases, per-head sinks). A view.
Result<Weight> weight_elements(const Weight& w, int64_t begin, int64_t count);
// Matrices [begin, begin + count) of a stack of ne[2] matrices (experts). A view.
Result<Weight> weight_matrices(const Weight& w, int64_t begin, int64_t count);
// Columns [begin, begin + count) of every row, copied into `storage` (which must outlive the
// returned Weight and not be resized after). begin and count must be whole blocks of the type.
Result<Weight> weight_columns(const Weight& w, int64_t begin, int64_t count, std::vector<uint8_t>& storage);

}  // namespace strata
