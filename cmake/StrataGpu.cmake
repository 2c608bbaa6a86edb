# The GPU backend's build: one set of kernel sources (src/backend/gpu/**/*.cu) compiled by nvcc as
# CUDA (STRATA_CUDA) or by clang++-19 as HIP (STRATA_HIP, a separate configure, docs/AMD_BUILD.md).
# Each kernel file is compiled once, for every target architecture in one invocation, into the
# object library strata_gpu that strata_engine absorbs. Without either, the backend compiles out
# and backend/gpu/no_gpu.cpp answers "no GPU support in this build".
#
# Used from src/CMakeLists.txt:
#   strata_gpu_sources(STRATA_ENGINE_SOURCES)     # before add_library(strata_engine ...)
#   strata_gpu_link(strata_engine)                # after

set(STRATA_CUDA AUTO CACHE STRING "Build the CUDA backend: ON, OFF or AUTO (on when nvcc is found)")
set_property(CACHE STRATA_CUDA PROPERTY STRINGS AUTO ON OFF)
option(STRATA_HIP "Build the HIP backend with clang++-19 (configure with CMAKE_CXX_COMPILER=clang++-19)" OFF)
set(STRATA_HIP_ARCHITECTURES "gfx906;gfx1030;gfx1100;gfx1151;gfx1200;gfx1201" CACHE STRING "AMD targets")

set(STRATA_GPU_BACKEND "")
if(STRATA_HIP)
  set(STRATA_GPU_BACKEND HIP)
elseif(STRATA_CUDA)
  if(STRATA_CUDA STREQUAL "AUTO" AND STRATA_SANITIZE)
    # The sanitizer flags are global compile options that nvcc does not accept.
  elseif(STRATA_CUDA STREQUAL "AUTO" AND CMAKE_CROSSCOMPILING)
    # The build machine's nvcc targets the build machine: CUDA for Windows is built on Windows
    # (docs/WINDOWS.md).
  elseif(STRATA_CUDA STREQUAL "AUTO")
    if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      set(STRATA_GPU_BACKEND CUDA)
    endif()
  else()
    set(STRATA_GPU_BACKEND CUDA)
  endif()
endif()

if(STRATA_GPU_BACKEND STREQUAL "CUDA")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80;89;90;120")
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # CMake 3.25 predates nvcc's C++20 dialect and would refuse the project's CXX_STANDARD 20 for
  # CUDA sources: tell it the flag.
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
elseif(STRATA_GPU_BACKEND STREQUAL "HIP" AND WIN32 AND NOT CMAKE_CROSSCOMPILING)
  # Windows with AMD's HIP SDK (cmake/windows/HipSdkRules.cmake; scripts/windows/configure-hip.cmd
  # configures it so): the SDK's clang, its device libraries and amdhip64.lib.
  include(${CMAKE_CURRENT_LIST_DIR}/windows/HipSdkRules.cmake)
  set(STRATA_HIP_SDK "" CACHE PATH "AMD HIP SDK folder (forward slashes; scripts/windows/configure-hip.cmd sets it)")
  if(NOT STRATA_HIP_SDK)
    message(FATAL_ERROR "STRATA_HIP on Windows: -DSTRATA_HIP_SDK=<the HIP SDK's folder> is not given: configure with "
                        "scripts\\windows\\configure-hip.cmd, which passes it and MSVC's environment")
  endif()
  strata_hip_sdk_environment_conflicts(conflicts)
  if(conflicts)
    message(FATAL_ERROR "STRATA_HIP on Windows: ${conflicts} set in the environment: CMake and clang read them "
                        "(backslashes and all) before any flag; clear them (scripts\\windows\\configure-hip.cmd does)")
  endif()
  strata_hip_sdk_settings("${STRATA_HIP_SDK}" sdk)
  if(sdk_MISSING)
    message(FATAL_ERROR "STRATA_HIP_SDK=${STRATA_HIP_SDK} is not a HIP SDK: missing ${sdk_MISSING}")
  endif()
  strata_forward_slashed("${CMAKE_CXX_COMPILER}" cxx)
  if(NOT cxx STREQUAL sdk_CXX_COMPILER)
    message(FATAL_ERROR "STRATA_HIP on Windows compiles with the SDK's clang (${sdk_CXX_COMPILER}), got ${CMAKE_CXX_COMPILER}")
  endif()
  set(STRATA_HIP_BITCODE ${sdk_BITCODE})
  set(STRATA_HIP_EXTRA_FLAGS --rocm-path=${sdk_ROOT})
  set(STRATA_HIP_INCLUDE ${sdk_INCLUDE})
  set(STRATA_HIP_LIBRARY ${sdk_LIBRARY})
elseif(STRATA_GPU_BACKEND STREQUAL "HIP")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR CMAKE_CXX_COMPILER_VERSION VERSION_LESS 19)
    message(FATAL_ERROR "STRATA_HIP needs clang++-19 as the C++ compiler (-DCMAKE_CXX_COMPILER=clang++-19), "
                        "got ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  endif()
  # Debian's rocm-device-libs 5.2 stops at gfx1036: a private bitcode folder adds the ISA version
  # files of gfx11/gfx12 (one constant each), generated here; the rest are links to the system's.
  set(STRATA_HIP_BITCODE ${CMAKE_BINARY_DIR}/amdgcn-bitcode)
  file(MAKE_DIRECTORY ${STRATA_HIP_BITCODE})
  file(GLOB system_bitcode /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/*.bc)
  if(NOT system_bitcode)
    message(FATAL_ERROR "STRATA_HIP: no ROCm device libraries in /usr/lib/x86_64-linux-gnu/amdgcn/bitcode "
                        "(install rocm-device-libs, or STRATA_SETUP_HIP=1 scripts/setup.sh)")
  endif()
  foreach(bc IN LISTS system_bitcode)
    get_filename_component(name ${bc} NAME)
    file(CREATE_LINK ${bc} ${STRATA_HIP_BITCODE}/${name} SYMBOLIC)
  endforeach()
  foreach(isa 1100 1101 1102 1150 1151 1200 1201)
    set(out ${STRATA_HIP_BITCODE}/oclc_isa_version_${isa}.bc)
    if(NOT EXISTS ${out})
      string(SUBSTRING ${isa} 0 2 major)
      string(SUBSTRING ${isa} 2 1 minor)
      string(SUBSTRING ${isa} 3 1 stepping)
      math(EXPR version "${major} * 1000 + ${minor} * 100 + ${stepping}")
      file(WRITE ${STRATA_HIP_BITCODE}/isa_${isa}.ll
           "target triple = \"amdgcn-amd-amdhsa\"\n@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 ${version}, align 4\n")
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} --target=amdgcn-amd-amdhsa -nogpulib -c -emit-llvm -x ir
                              ${STRATA_HIP_BITCODE}/isa_${isa}.ll -o ${out}
                      RESULT_VARIABLE rc ERROR_VARIABLE err)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "STRATA_HIP: generating ${out} failed: ${err}")
      endif()
    endif()
  endforeach()
endif()

# Replaces the engine's backend/gpu sources by the ones this build needs. Elsewhere, a file named
# *_with_gpu.cpp is built only with a GPU backend and its *_without_gpu.cpp twin only without one
# (host code above the backend that calls GPU ops, such as the expert tiers).
function(strata_gpu_sources sources_var)
  set(sources ${${sources_var}})
  list(FILTER sources EXCLUDE REGEX "/backend/gpu/")
  if(STRATA_GPU_BACKEND)
    list(FILTER sources EXCLUDE REGEX "_without_gpu\\.cpp$")
  else()
    list(FILTER sources EXCLUDE REGEX "_with_gpu\\.cpp$")
  endif()
  set(gpu_dir ${PROJECT_SOURCE_DIR}/src/backend/gpu)
  file(GLOB host_sources CONFIGURE_DEPENDS ${gpu_dir}/*.cpp)
  if(STRATA_GPU_BACKEND)
    list(FILTER host_sources EXCLUDE REGEX "/no_gpu\\.cpp$")
  else()
    set(host_sources ${gpu_dir}/no_gpu.cpp)
    # The GPU forward passes (model/gpu/) call the GPU ops: without a backend only the loader
    # that chooses a device and the passes' stubs (gpu_forward_without_gpu.cpp) remain.
    list(FILTER sources EXCLUDE REGEX "/model/gpu/")
    list(APPEND sources ${PROJECT_SOURCE_DIR}/src/model/gpu/gpu_model.cpp
         ${PROJECT_SOURCE_DIR}/src/model/gpu/gpu_forward_without_gpu.cpp)
  endif()
  list(APPEND sources ${host_sources})
  set(${sources_var} ${sources} PARENT_SCOPE)
endfunction()

# STRATA_HAS_GPU (0/1) is defined for the users of the engine (tests choose their cases by it),
# not for the engine itself, so a build with and one without the GPU share compiled objects.
function(strata_gpu_link engine)
  if(NOT STRATA_GPU_BACKEND)
    target_compile_definitions(${engine} INTERFACE STRATA_HAS_GPU=0)
    message(STATUS "Strata GPU backend: none (no GPU support in this build)")
    return()
  endif()
  file(GLOB_RECURSE kernels CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backend/gpu/*.cu)
  add_library(strata_gpu OBJECT ${kernels})
  target_include_directories(strata_gpu PRIVATE ${PROJECT_SOURCE_DIR}/src)
  if(STRATA_GPU_BACKEND STREQUAL "CUDA")
    # std::bit_cast and other constexpr library functions in device code; -Xcudafe keeps
    # nvcc's front end quiet about the host-only headers it parses.
    target_compile_options(strata_gpu PRIVATE --expt-relaxed-constexpr -Xcompiler=-Wall,-Wextra,-Wno-unused-parameter
                           $<$<BOOL:${STRATA_WERROR}>:-Werror=all-warnings>)
    target_link_libraries(${engine} PUBLIC CUDA::cudart_static)
    message(STATUS "Strata GPU backend: CUDA ${CMAKE_CUDA_COMPILER_VERSION} for ${CMAKE_CUDA_ARCHITECTURES}")
  else()
    set(arch_flags)
    foreach(arch IN LISTS STRATA_HIP_ARCHITECTURES)
      list(APPEND arch_flags --offload-arch=${arch})
    endforeach()
    set_source_files_properties(${kernels} PROPERTIES LANGUAGE CXX)
    target_compile_options(strata_gpu PRIVATE -xhip ${arch_flags} --rocm-device-lib-path=${STRATA_HIP_BITCODE}
                           ${STRATA_HIP_EXTRA_FLAGS} -mcode-object-version=4 -Wall -Wextra -Wno-unused-parameter)
    target_compile_definitions(strata_gpu PRIVATE __HIP_PLATFORM_AMD__=1 STRATA_GPU_HIP=1)
    if(STRATA_HIP_INCLUDE)  # Windows: the SDK's headers and import library (Linux: the system's)
      target_include_directories(strata_gpu SYSTEM PRIVATE ${STRATA_HIP_INCLUDE})
      target_link_libraries(${engine} PUBLIC ${STRATA_HIP_LIBRARY})
    else()
      target_link_libraries(${engine} PUBLIC amdhip64)
    endif()
    message(STATUS "Strata GPU backend: HIP (clang ${CMAKE_CXX_COMPILER_VERSION}) for ${STRATA_HIP_ARCHITECTURES}")
  endif()
  target_sources(${engine} PRIVATE $<TARGET_OBJECTS:strata_gpu>)
  target_compile_definitions(${engine} INTERFACE STRATA_HAS_GPU=1)
endfunction()
