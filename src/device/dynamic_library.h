#pragma once
// A shared library opened at run time (dlopen / LoadLibrary), so that Strata starts and lists
// devices on machines without a GPU driver: a missing library is a value, never a link error.
//
//   DynamicLibrary cuda = DynamicLibrary::open({"libcuda.so.1"});
//   auto cu_init = cuda.symbol<int (*)(unsigned)>("cuInit");
//   if (cu_init && cu_init(0) == 0) { ... }

#include <initializer_list>
#include <string>
#include <vector>

namespace strata {

class DynamicLibrary {
public:
    // Tries each name in turn; the first that loads wins. error() says why none did.
    static DynamicLibrary open(std::initializer_list<const char*> names);
    // A name with a folder in it is loaded from there, its own dependencies beside it (Windows).
    static DynamicLibrary open(const std::vector<std::string>& names);

    // Never closed: CUDA and HIP register process-wide state and exit handlers that crash if
    // their code is unmapped before the process ends, so a loaded driver stays for its life.

    bool loaded() const { return handle_ != nullptr; }
    const std::string& error() const { return error_; }

    // nullptr when the library lacks the symbol (an older driver, say).
    template <typename Fn>
    Fn symbol(const char* name) const {
        return reinterpret_cast<Fn>(raw_symbol(name));
    }

private:
    void* raw_symbol(const char* name) const;
    void* handle_ = nullptr;
    std::string error_;
};

}  // namespace strata
