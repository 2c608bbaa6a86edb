# Cross-compiles Strata for 64-bit Windows on Debian: clang-19 targeting mingw-w64, with the
# mingw-w64 GCC's runtime and libstdc++ (its POSIX-threads flavour: std::thread and std::mutex need
# it). Not mingw's GCC itself: it keeps `thread_local` variables in emulated TLS, whose blocks are
# freed at thread exit *before* the variables' destructors run (their storage is reused under
# them: a server stopping crashed in a tokenizer's per-thread scratch); clang uses the native TLS
# of Windows, which outlives the destructors. The dependencies are built for the same target into a
# prefix by scripts/windows_deps.sh; pass it as STRATA_WINDOWS_PREFIX:
#   cmake -S . -B build-windows -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/windows/mingw-w64-x86_64.cmake \
#         -DSTRATA_WINDOWS_PREFIX=$PWD/build-windows-deps/prefix
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(triple x86_64-w64-mingw32)
set(CMAKE_C_COMPILER clang-19)
set(CMAKE_CXX_COMPILER clang++-19)
set(CMAKE_C_COMPILER_TARGET ${triple})
set(CMAKE_CXX_COMPILER_TARGET ${triple})
set(CMAKE_RC_COMPILER ${triple}-windres)

set(STRATA_WINDOWS_PREFIX "" CACHE PATH "Prefix holding the Windows builds of the dependencies")
# try_compile projects see the toolchain file again but not the cache: pass the prefix on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES STRATA_WINDOWS_PREFIX)

# Libraries, headers and CMake packages come from the target's sysroot and the prefix only, never
# from the build machine's /usr; programs (ninja, pkg-config) from the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/${triple} ${STRATA_WINDOWS_PREFIX})
set(CMAKE_PREFIX_PATH ${STRATA_WINDOWS_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config reads the prefix's .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "${STRATA_WINDOWS_PREFIX}/lib/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# One self-contained .exe: the GCC runtime and winpthreads linked in, so a user copies one file.
# libstdc++'s threads are winpthreads: named explicitly, as clang's driver does not add it.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -pthread")
set(CMAKE_CXX_STANDARD_LIBRARIES "-lpthread")
# Windows 10 1809 and newer (cpp-httplib's Winsock use and the file APIs need 0x0A00).
add_compile_definitions(_WIN32_WINNT=0x0A00 WINVER=0x0A00 NOMINMAX WIN32_LEAN_AND_MEAN)
# Tests and tools run through Wine on the build machine.
find_program(STRATA_WINE NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(STRATA_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${STRATA_WINE})
endif()
