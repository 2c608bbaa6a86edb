#include "device/dynamic_library.h"

#include <fmt/format.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace strata {

DynamicLibrary DynamicLibrary::open(std::initializer_list<const char*> names) {
    return open(std::vector<std::string>(names.begin(), names.end()));
}

DynamicLibrary DynamicLibrary::open(const std::vector<std::string>& names) {
    DynamicLibrary lib;
    std::string tried;
    for (const std::string& name_text : names) {
        const char* name = name_text.c_str();
#ifdef _WIN32
        // With a folder in the name, the DLL's own dependencies are searched for in that folder
        // (an SDK's bin) instead of the program's.
        const bool has_folder = name_text.find_first_of("\\/") != std::string::npos;
        lib.handle_ = reinterpret_cast<void*>(LoadLibraryExA(name, nullptr, has_folder ? LOAD_WITH_ALTERED_SEARCH_PATH : 0));
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
