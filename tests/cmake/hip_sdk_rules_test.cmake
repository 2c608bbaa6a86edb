# The HIP-on-Windows build rules (cmake/windows/HipSdkRules.cmake) in script mode, on SDK trees laid
# out as AMD's HIP SDK installs them: the paths come out forward-slashed whatever form HIP_PATH
# had, a tree lacking a file is named, and HIP_PATH/ROCM_PATH in the environment are caught.
# Usage: cmake -DWORK=<scratch folder> -DRULES=<HipSdkRules.cmake> -P hip_sdk_rules_test.cmake
include(${RULES})
set(failures 0)
macro(expect_equal what got want)
  if(NOT "${got}" STREQUAL "${want}")
    message(SEND_ERROR "${what}: got '${got}', expected '${want}'")
    math(EXPR failures "${failures} + 1")
  endif()
endmacro()

strata_forward_slashed("C:\\Program Files\\AMD\\ROCm\\6.2\\" p)
expect_equal("HIP_PATH as the installer sets it" "${p}" "C:/Program Files/AMD/ROCm/6.2")
strata_forward_slashed("D:/sdk//" p)
expect_equal("trailing separators" "${p}" "D:/sdk")

# A whole SDK (the files the rules need, as the 6.x installer lays them out).
file(REMOVE_RECURSE "${WORK}")
set(sdk "${WORK}/ROCm/6.2")
foreach(f IN ITEMS bin/clang.exe bin/clang++.exe bin/hipInfo.exe include/hip/hip_runtime.h lib/amdhip64.lib
                   amdgcn/bitcode/ocml.bc amdgcn/bitcode/oclc_isa_version_1201.bc)
  file(WRITE "${sdk}/${f}" "")
endforeach()
strata_hip_sdk_settings("${sdk}//" s)
expect_equal("root" "${s_ROOT}" "${sdk}")
expect_equal("C compiler" "${s_C_COMPILER}" "${sdk}/bin/clang.exe")
expect_equal("C++ compiler" "${s_CXX_COMPILER}" "${sdk}/bin/clang++.exe")
expect_equal("import library" "${s_LIBRARY}" "${sdk}/lib/amdhip64.lib")
expect_equal("flags" "${s_FLAGS}" "--rocm-path=${sdk};--rocm-device-lib-path=${sdk}/amdgcn/bitcode")
expect_equal("nothing missing" "${s_MISSING}" "")
string(FIND "${s_FLAGS}" "\\" backslash)
expect_equal("no backslash in the flags" "${backslash}" "-1")

# A runtime-only install (no compiler, no import library): named, file by file.
file(REMOVE "${sdk}/bin/clang++.exe" "${sdk}/lib/amdhip64.lib")
strata_hip_sdk_settings("${sdk}" s)
expect_equal("missing files" "${s_MISSING}" "${sdk}/bin/clang++.exe;${sdk}/lib/amdhip64.lib")

# The environment the configure must not see.
set(ENV{HIP_PATH} "C:\\Program Files\\AMD\\ROCm\\6.2\\")
unset(ENV{ROCM_PATH})
strata_hip_sdk_environment_conflicts(c)
expect_equal("HIP_PATH set" "${c}" "HIP_PATH")
set(ENV{ROCM_PATH} "C:\\ROCm")
strata_hip_sdk_environment_conflicts(c)
expect_equal("both set" "${c}" "HIP_PATH;ROCM_PATH")
unset(ENV{HIP_PATH})
unset(ENV{ROCM_PATH})
strata_hip_sdk_environment_conflicts(c)
expect_equal("none set" "${c}" "")

file(REMOVE_RECURSE "${WORK}")
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} check(s) failed")
endif()
message(STATUS "HIP SDK rules: all checks passed")
