#pragma once
// The n-gram hash constants of a qwen4exp PLE block, derived as HF's Qwen4ExpTextNGramEmbedding
// derives them from its config (NEW_ARCHS.md §A1.7): the per-n-gram multipliers from the seed
// and the vocabulary size, and each head's prime modulus and first table row. The converter
// copies the checkpoint's buffers of the same values into ple.layer_multipliers,
// ple.head_vocab_sizes and ple.head_offsets. `strata synth` writes them, and with a smaller
// `ngram_base` (a table cut for a small disk) they stay valid: every head's rows fit the table.
//
//   PleConstants c = ple_constants({.vocab = 248320});   // Qwen3.8-Flash-Next's published values
//   c.rows == 320001536;  c.head_sizes[0] == 20000003;

#include <cstdint>
#include <vector>

namespace strata {

struct PleConstantsSpec {
    uint64_t vocab = 0;               // vocab_size: bounds the multipliers so ids · m stay below 2^63
    uint64_t seed = 1234;             // config `seed`
    uint32_t ple_layer_index = 0;     // position of the block in ple_layer_ids
    uint32_t ngram_size = 3;
    uint32_t heads_per_ngram = 8;
    uint64_t ngram_base = 20000000;   // ngram_vocab_size_base: the primes start here
    uint64_t rows_multiple = 128;     // make_ngram_vocab_size_divisible_by
};

struct PleConstants {
    std::vector<uint64_t> multipliers;   // [ngram_size]
    std::vector<uint64_t> head_sizes;    // [(ngram_size-1)·heads_per_ngram] primes
    std::vector<uint64_t> head_offsets;  // running sums of head_sizes
    uint64_t rows = 0;                   // table rows: Σ head_sizes rounded up to rows_multiple
};

PleConstants ple_constants(const PleConstantsSpec& spec);

// The largest ngram_base whose table has at most `max_rows` rows, or 0 when even the smallest
// primes need more.
uint64_t ple_base_for_rows(PleConstantsSpec spec, uint64_t max_rows);

}  // namespace strata
