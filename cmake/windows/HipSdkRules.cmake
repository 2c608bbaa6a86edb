# The HIP backend built on Windows with AMD's HIP SDK (the facts of the Windows ports this design
# came from; docs/WINDOWS.md):
# - the SDK's own clang compiles C, C++ and HIP, for the MSVC ABI: configure inside a shell that
#   ran vcvars64.bat (MSVC's linker, headers and libraries), scripts/windows/configure-hip.cmd;
# - every path handed to CMake or to clang uses forward slashes: HIP_PATH comes with backslashes and
#   a trailing one ("C:\Program Files\AMD\ROCm\6.2\"), and a backslash in a -D value or a flag is
#   read as an escape;
# - HIP_PATH and ROCM_PATH are cleared from the environment for the configure: CMake's HIP support
#   and clang's ROCm detection read them, backslashes and all, before any flag; the SDK is passed
#   once, as STRATA_HIP_SDK, and clang gets it as --rocm-path.
# strata_hip_sdk_settings() derives everything from the SDK's root and checks that the files are
# there; tests/cmake/hip_sdk_rules_test.cmake runs it in script mode on recorded SDK trees.
#
#   strata_hip_sdk_settings("C:\\Program Files\\AMD\\ROCm\\6.2\\" sdk)
#   # sdk_ROOT, sdk_C_COMPILER, sdk_CXX_COMPILER, sdk_BITCODE, sdk_INCLUDE, sdk_LIBRARY, sdk_FLAGS, sdk_MISSING

# "C:\Program Files\AMD\ROCm\6.2\" -> "C:/Program Files/AMD/ROCm/6.2". (file(TO_CMAKE_PATH) would
# also do it on Windows, but reads ':' as a list separator elsewhere, where this is tested.)
function(strata_forward_slashed path out)
  string(REPLACE "\\" "/" p "${path}")
  string(REGEX REPLACE "/+$" "" p "${p}")
  set(${out} "${p}" PARENT_SCOPE)
endfunction()

function(strata_hip_sdk_settings sdk_path prefix)
  strata_forward_slashed("${sdk_path}" root)
  set(c "${root}/bin/clang.exe")
  set(cxx "${root}/bin/clang++.exe")
  set(bitcode "${root}/amdgcn/bitcode")
  set(include "${root}/include")
  set(library "${root}/lib/amdhip64.lib")
  set(missing)
  foreach(f IN ITEMS "${c}" "${cxx}" "${include}/hip/hip_runtime.h" "${library}")
    if(NOT EXISTS "${f}")
      list(APPEND missing "${f}")
    endif()
  endforeach()
  if(NOT IS_DIRECTORY "${bitcode}")
    list(APPEND missing "${bitcode}/")
  endif()
  set(${prefix}_ROOT "${root}" PARENT_SCOPE)
  set(${prefix}_C_COMPILER "${c}" PARENT_SCOPE)
  set(${prefix}_CXX_COMPILER "${cxx}" PARENT_SCOPE)
  set(${prefix}_BITCODE "${bitcode}" PARENT_SCOPE)
  set(${prefix}_INCLUDE "${include}" PARENT_SCOPE)
  set(${prefix}_LIBRARY "${library}" PARENT_SCOPE)
  # The SDK's device libraries know every target it supports: no private bitcode folder (Linux's
  # Debian packages need one, AMD_BUILD.md).
  set(${prefix}_FLAGS "--rocm-path=${root};--rocm-device-lib-path=${bitcode}" PARENT_SCOPE)
  set(${prefix}_MISSING "${missing}" PARENT_SCOPE)
endfunction()

# The environment a configure must not see (see above); returns the variables that are set.
function(strata_hip_sdk_environment_conflicts out)
  set(conflicts)
  foreach(v IN ITEMS HIP_PATH ROCM_PATH)
    if(DEFINED ENV{${v}})
      list(APPEND conflicts ${v})
    endif()
  endforeach()
  set(${out} "${conflicts}" PARENT_SCOPE)
endfunction()
