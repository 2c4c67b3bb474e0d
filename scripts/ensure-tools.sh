#!/usr/bin/env bash
# Installs what the build and tests need when it is missing: cargo-nextest (the test runner of
# `make test`) with cargo, and the Debian packages (verilator for lint and the Verilator engine,
# yosys for the latch/hierarchy checks and the timing estimate, tshark to read the pcaps we write,
# iproute2 and ping for the Linux kernel as the card's peer in a network namespace).
set -euo pipefail
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "ensure-tools: installing cargo-nextest (cargo install, a few minutes)"
  cargo install --locked --quiet cargo-nextest
  cargo nextest --version >/dev/null 2>&1 || { echo "ensure-tools: ERROR: cargo nextest still missing after cargo install" >&2; exit 1; }
fi
# The AArch64 standard library, to compile the host library for Arm hosts (make aarch64).
if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
  echo "ensure-tools: adding the aarch64-unknown-linux-gnu target (rustup)"
  rustup target add aarch64-unknown-linux-gnu >/dev/null
fi
need=()
command -v verilator >/dev/null 2>&1 || need+=(verilator)
command -v yosys >/dev/null 2>&1 || need+=(yosys)
command -v tshark >/dev/null 2>&1 || need+=(tshark)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v ping >/dev/null 2>&1 || need+=(iputils-ping)
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
  t=${t/iproute2/ip}; t=${t/iputils-ping/ping}
  command -v "$t" >/dev/null 2>&1 || { echo "ensure-tools: ERROR: $t still missing after apt-get" >&2; exit 1; }
done
echo "ensure-tools: ok ($(verilator --version | head -1); $(yosys -V))"
