#pragma once
// The parser and the evaluator recurse as deep as the template nests (parentheses, `not not ...`,
// blocks, a macro calling itself), which a broken or hostile template can make deep enough to
// overflow the thread's stack and kill the process (the fuzzer found one through 200 recursive
// macro calls). Each recursive step asks how much stack this parse or render has used since it
// began and fails with an error past a bound that fits well inside the smallest thread stack we
// run on (1 MiB, Windows' default; sanitizer builds' frames are several times larger, and real
// templates use a few KiB).
//
//   StackGuard guard;                                  // at the start of a parse or render
//   if (guard.exceeded()) raise("template nested too deeply");

#include <cstddef>
#include <cstdint>

namespace strata::chat_template {

class StackGuard {
public:
    static constexpr size_t kMaxBytes = size_t(512) << 10;
    StackGuard() : base_(here()) {}
    // Stacks grow down on every target we build for.
    bool exceeded() const { return base_ > here() && base_ - here() > kMaxBytes; }

private:
    // The frame address, not a local's: under AddressSanitizer locals may live on a heap "fake stack".
    __attribute__((noinline)) static uintptr_t here() { return reinterpret_cast<uintptr_t>(__builtin_frame_address(0)); }
    uintptr_t base_;
};

}  // namespace strata::chat_template
