#!/usr/bin/env bash
# Lints the Verilog of every gateware module: verilator --lint-only -Wall (waivers with their reasons
# in hdl/lint.vlt) and yosys `hierarchy -check; proc` with an assertion that no latch was inferred.
set -euo pipefail
out=build/verilog
cargo run -q --release -p nanet-hdl --bin nanet-verilog -- --out "$out" >/dev/null
fail=0
for v in "$out"/*.v; do
  top=$(basename "$v" .v)
  if ! verilator --lint-only -Wall hdl/lint.vlt "$v" --top-module "$top"; then
    echo "lint: verilator FAILED on $top"; fail=1; continue
  fi
  if ! yosys -q -l "$out/$top.yosys.log" -p "read_verilog $v; hierarchy -check -top $top; proc; select -assert-none t:\$dlatch" >/dev/null; then
    echo "lint: yosys FAILED on $top (undriven nets, missing modules or latches; see $out/$top.yosys.log)"; fail=1; continue
  fi
  echo "lint: $top ok (verilator -Wall, yosys: no latches)"
done
exit $fail
