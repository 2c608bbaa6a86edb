// libFuzzer target for the GGUF parser: any byte string must give a parsed file or a clear error,
// never a crash, a hang, an out-of-bounds read or an unbounded allocation.
//   build: cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DSTRATA_BUILD_FUZZ=ON
//   run:   build-fuzz/bin/gguf_parser_fuzz fuzz/corpus/gguf -max_total_time=60
#include <cstddef>
#include <cstdint>

#include "gguf/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    strata::GgufLimits limits;
    limits.max_array_items = 1 << 20;  // keep single inputs cheap; the checks are the same
    auto parsed = strata::GgufFile::parse_memory(data, size, "fuzz-input", limits);
    if (parsed) {
        // Touch what a loader touches: every tensor's first and last byte, every metadata value.
        volatile uint8_t sink = 0;
        for (const auto& t : parsed->tensors()) {
            if (t.n_bytes == 0) continue;
            const uint8_t* p = parsed->tensor_data(t);
            sink = sink + p[0] + p[t.n_bytes - 1];
        }
        for (const auto& e : parsed->metadata()) (void)e.value.to_display_string();
    } else {
        (void)parsed.status().message().size();
    }
    return 0;
}
