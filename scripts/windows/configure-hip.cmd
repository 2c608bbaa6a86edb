@echo off
rem Configures Strata's HIP (AMD GPU) build on Windows with AMD's HIP SDK; cmake/windows/HipSdkRules.cmake
rem says why each step is there. Run it from any Command Prompt; then: cmake --build <build dir>
rem Usage: scripts\windows\configure-hip.cmd <build dir> [more cmake arguments]
rem Quote each "-DNAME=VALUE": cmd splits unquoted arguments at "=".
rem STRATA_CONFIGURE_DRY_RUN=1: print the environment and the cmake command instead of running them.
setlocal EnableExtensions
if "%~1"=="" (
  echo usage: configure-hip.cmd ^<build dir^> [more cmake arguments]
  exit /b 2
)
if not defined HIP_PATH (
  echo HIP_PATH is not set: install AMD's HIP SDK, or set HIP_PATH to the SDK's folder
  exit /b 1
)
rem Forward slashes, no trailing one: a backslash in a -D value or a flag reads as an escape.
set "SDK=%HIP_PATH:\=/%"
if "%SDK:~-1%"=="/" set "SDK=%SDK:~0,-1%"
if not "%STRATA_CONFIGURE_DRY_RUN%"=="1" (
  rem MSVC's linker, headers and libraries: the SDK's clang targets the MSVC ABI.
  set "VSWHERE=%ProgramFiles(x86)%\Microsoft Visual Studio\Installer\vswhere.exe"
)
if not "%STRATA_CONFIGURE_DRY_RUN%"=="1" (
  for /f "usebackq delims=" %%i in (`"%VSWHERE%" -latest -products * -requires Microsoft.VisualStudio.Component.VC.Tools.x86.x64 -property installationPath`) do set "VSDIR=%%i"
)
if not "%STRATA_CONFIGURE_DRY_RUN%"=="1" if not defined VSDIR (
  echo no Visual Studio with the C++ tools found: install the "Desktop development with C++" workload
  exit /b 1
)
if not "%STRATA_CONFIGURE_DRY_RUN%"=="1" call "%VSDIR%\VC\Auxiliary\Build\vcvars64.bat" > nul || exit /b 1
rem CMake's HIP support and clang's ROCm detection read these before any flag: the SDK is passed once.
set HIP_PATH=
set ROCM_PATH=
set CMAKE_ARGS=-S "%~dp0..\.." -B "%~1" -G Ninja -DSTRATA_HIP=ON "-DSTRATA_HIP_SDK=%SDK%" "-DCMAKE_C_COMPILER=%SDK%/bin/clang.exe" "-DCMAKE_CXX_COMPILER=%SDK%/bin/clang++.exe" %2 %3 %4 %5 %6 %7 %8 %9
if "%STRATA_CONFIGURE_DRY_RUN%"=="1" (
  echo HIP_PATH=%HIP_PATH%
  echo ROCM_PATH=%ROCM_PATH%
  echo cmake %CMAKE_ARGS%
  exit /b 0
)
cmake %CMAKE_ARGS%
