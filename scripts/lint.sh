#!/usr/bin/env bash
# Lints the Verilog of every gateware module: verilator --lint-only -Wall (waivers with their reasons
# in hdl/lint.vlt) and yosys `hierarchy -check; proc` with an assertion that no latch was inferred.
# The modules that have ports are built for the default four; the NIC top is linted again with 1, 2
# and 3 ports (the other counts `make verilog PORTS=N` makes).
set -euo pipefail
out=build/verilog
fail=0

lint_one() { # lint_one FILE TOP LABEL
  local v=$1 top=$2 label=$3
  if ! verilator --lint-only -Wall hdl/lint.vlt "$v" --top-module "$top"; then
    echo "lint: verilator FAILED on $label"; fail=1; return
  fi
  if ! yosys -q -l "${v%.v}.yosys.log" -p "read_verilog $v; hierarchy -check -top $top; proc; select -assert-none t:\$dlatch" >/dev/null; then
    echo "lint: yosys FAILED on $label (undriven nets, missing modules or latches; see ${v%.v}.yosys.log)"; fail=1; return
  fi
  echo "lint: $label ok (verilator -Wall, yosys: no latches)"
}

cargo run -q --release -p nanet-hdl --bin nanet-verilog -- --out "$out" >/dev/null
for v in "$out"/*.v; do
  top=$(basename "$v" .v)
  lint_one "$v" "$top" "$top"
done
for n in 1 2 3; do
  cargo run -q --release -p nanet-hdl --bin nanet-verilog -- --out "$out/ports$n" --ports "$n" nanet_nic >/dev/null
  lint_one "$out/ports$n/nanet_nic.v" nanet_nic "nanet_nic (a $n-port card)"
done
exit $fail
