#!/usr/bin/env bash
# The HIP-on-Windows configure script (scripts/windows/configure-hip.cmd) under Windows' cmd (Wine
# in CI), in its dry run: HIP_PATH as the SDK installer sets it (backslashes, a trailing one) comes
# out forward-slashed in every -D value, HIP_PATH and ROCM_PATH are cleared for the configure, the
# SDK's clang is the compiler, and a missing HIP_PATH is named. (The rules CMake applies then are
# checked by tests/cmake/hip_sdk_rules_test.cmake.) Elsewhere: skipped.
# Usage: configure_hip_windows.sh <strata launcher> <testdata-root>
set -euo pipefail
strata=$1
if [[ "${STRATA_TEST_PLATFORM:-}" != "windows" ]]; then
  echo "SKIP: a Windows command script"
  exit 0
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
wine=$(sed -n 's|^exec "\([^"]*\)".*|\1|p' "$strata")  # the launcher's emulator (tests/CMakeLists.txt)
[[ -x $wine ]] || fail "no emulator in the launcher $strata"
root=$(cd "$(dirname "$0")/../.." && pwd)
script="Z:${root//\//\\}\\scripts\\windows\\configure-hip.cmd"

out=$(HIP_PATH='C:\Program Files\AMD\ROCm\6.2\' ROCM_PATH='C:\ROCm' STRATA_CONFIGURE_DRY_RUN=1 WINEDEBUG=-all \
  "$wine" cmd /c "$script" build-hip -Wno-dev 2>&1 | tr -d '\r')
printf '%s\n' "$out"
grep -qx "HIP_PATH=" <<<"$out" || fail "HIP_PATH was not cleared"
grep -qx "ROCM_PATH=" <<<"$out" || fail "ROCM_PATH was not cleared"
line=$(grep '^cmake ' <<<"$out") || fail "no cmake command"
for want in '"-DSTRATA_HIP_SDK=C:/Program Files/AMD/ROCm/6.2"' '"-DCMAKE_C_COMPILER=C:/Program Files/AMD/ROCm/6.2/bin/clang.exe"' \
  '"-DCMAKE_CXX_COMPILER=C:/Program Files/AMD/ROCm/6.2/bin/clang++.exe"' '-DSTRATA_HIP=ON' ' -Wno-dev'; do
  grep -qF -- "$want" <<<"$line" || fail "the cmake command lacks $want: $line"
done
# No backslash in any -D value.
grep -oE '"?-D[^ ]*( [^-][^ ]*)*' <<<"$line" | grep -qF '\' && fail "a -D value kept a backslash: $line"

status=0
missing=$(env -u HIP_PATH STRATA_CONFIGURE_DRY_RUN=1 WINEDEBUG=-all "$wine" cmd /c "$script" build-hip 2>&1 | tr -d '\r') || status=$?
[[ $status != 0 ]] || fail "no HIP_PATH: the script succeeded"
grep -q "HIP_PATH is not set" <<<"$missing" || fail "no HIP_PATH: $missing"
echo "OK: configure-hip.cmd"
