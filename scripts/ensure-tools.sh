#!/usr/bin/env bash
# Installs the Debian packages the build and tests need when they are missing (verilator for lint and
# the Verilator engine, yosys for the latch/hierarchy checks, tshark to read the pcaps we write).
set -euo pipefail
need=()
command -v verilator >/dev/null 2>&1 || need+=(verilator)
command -v yosys >/dev/null 2>&1 || need+=(yosys)
command -v tshark >/dev/null 2>&1 || need+=(tshark)
[ ${#need[@]} -eq 0 ] && exit 0
echo "ensure-tools: installing missing packages: ${need[*]}"
if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
  echo "ensure-tools: ERROR: ${need[*]} missing and not root (no sudo); install them with apt-get" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
for t in "${need[@]}"; do
  command -v "$t" >/dev/null 2>&1 || { echo "ensure-tools: ERROR: $t still missing after apt-get" >&2; exit 1; }
done
echo "ensure-tools: ok ($(verilator --version | head -1); $(yosys -V))"
