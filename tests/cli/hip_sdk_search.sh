#!/usr/bin/env bash
# End-to-end, Windows (under Wine in CI): `strata devices` finds the HIP SDK where the installer
# leaves it, in order, on the real file system: HIP_PATH first, the versioned HIP_PATH_NN newest
# first, a stale variable named as skipped, and the runtime DLL looked for in each SDK's bin after
# the bare names. (Wine sets %ProgramFiles% itself, so the install-folder scan is covered by the
# unit tests in tests/device/hip_sdk_test.cpp.) Elsewhere there is no SDK to look for: skipped.
# Usage: hip_sdk_search.sh <strata> <testdata-root>
set -euo pipefail
strata=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
if [[ "${STRATA_TEST_PLATFORM:-}" != "windows" ]]; then
  echo "SKIP: the HIP SDK search runs on Windows only (Linux finds libamdhip64.so on the loader's path)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
windows_path() { printf 'Z:%s' "${1//\//\\}"; }  # Wine's drive for the Unix root
mkdir -p "$work/sdk-6.1/bin" "$work/sdk-6.4/bin" "$work/chosen/bin"
touch "$work/sdk-6.1/bin/hipInfo.exe" "$work/sdk-6.1/bin/amdhip64_6.dll" "$work/sdk-6.4/bin/amdhip64_6.dll" \
  "$work/chosen/bin/hipInfo.exe"

out=$(HIP_PATH="$(windows_path "$work/chosen")\\" HIP_PATH_61="$(windows_path "$work/sdk-6.1")" \
  HIP_PATH_64="$(windows_path "$work/sdk-6.4")" HIP_PATH_57='Z:\no\such\sdk' "$strata" devices 2>&1) ||
  fail "strata devices: $out"
printf '%s\n' "$out"
sdk_line=$(grep '^HIP SDK' <<<"$out") || fail "no HIP SDK line"
chosen=$(windows_path "$work/chosen")
want="HIP SDK: $chosen (HIP_PATH); then $(windows_path "$work/sdk-6.4") (HIP_PATH_64, no hipInfo.exe); then $(windows_path "$work/sdk-6.1") (HIP_PATH_61); skipped HIP_PATH_57=Z:\\no\\such\\sdk: the folder does not exist"
[[ "$sdk_line" == "$want" ]] || fail "expected
$want
got
$sdk_line"
# The empty DLLs do not load, and the listing names every place it tried, in order.
grep -qF "could not load amdhip64_7.dll, amdhip64_6.dll, amdhip64.dll, $(windows_path "$work/sdk-6.4")\\bin\\amdhip64_6.dll, $(windows_path "$work/sdk-6.1")\\bin\\amdhip64_6.dll" <<<"$out" ||
  fail "the HIP runtime was not looked for in the SDKs' bin folders, in order"
echo "OK: HIP SDK search order"
