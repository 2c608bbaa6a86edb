#include "device/dynamic_library.h"

#include <fmt/format.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace strata {

DynamicLibrary DynamicLibrary::open(std::initializer_list<const char*> names) {
    DynamicLibrary lib;
    std::string tried;
    for (const char* name : names) {
#ifdef _WIN32
        lib.handle_ = reinterpret_cast<void*>(LoadLibraryA(name));
#else
        // RTLD_LOCAL: the runtime's symbols must not leak into, or clash with, the rest of Strata.
        lib.handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
#endif
        if (lib.handle_) return lib;
        tried += tried.empty() ? name : fmt::format(", {}", name);
    }
    lib.error_ = fmt::format("could not load {}", tried);
    return lib;
}

void* DynamicLibrary::raw_symbol(const char* name) const {
    if (!handle_) return nullptr;
#ifdef _WIN32
    return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(handle_), name));
#else
    return dlsym(handle_, name);
#endif
}

}  // namespace strata
