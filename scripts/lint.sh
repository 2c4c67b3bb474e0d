#!/usr/bin/env bash
# Lints the Verilog of every gateware module: verilator --lint-only -Wall (waivers with their reasons
# in hdl/lint.vlt) and yosys `hierarchy -check; proc` with an assertion that no latch was inferred.
# The modules that have ports are built for the default four; the NIC top is linted with 1 and 3
# ports on its own, and with 4 (Gen2 and Gen3) and 2 inside the DE5-net board tops, whose files
# hold the very same nanet_nic.v (so the four-port cards and the two-port card are not linted a
# second time on their own).
# Runs the generators from target/release (`make lint` builds them first, with the workspace's
# features: see the Makefile).
set -euo pipefail
bin=target/release
for b in nanet-verilog nanet-board; do
  [ -x "$bin/$b" ] || { echo "lint: $bin/$b missing: run make lint (it builds it)" >&2; exit 1; }
done
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

"$bin/nanet-verilog" --out "$out" >/dev/null
for v in "$out"/*.v; do
  top=$(basename "$v" .v)
  case $top in nanet_nic | nanet_nic_256) continue ;; esac # in the board tops below
  lint_one "$v" "$top" "$top"
done
for n in 1 3; do
  "$bin/nanet-verilog" --out "$out/ports$n" --ports "$n" nanet_nic >/dev/null
  lint_one "$out/ports$n/nanet_nic.v" nanet_nic "nanet_nic (a $n-port card)"
done
# The board top with the vendor IP as black boxes, as `make verilog` writes it, for the default
# port count and for two ports at Gen2 x8, and for the default port count at Gen3 x8 (the 256-bit
# NIC against the Hard IP's 256-bit interface): Verilator on all of it, yosys also checks for
# undriven and multiply driven nets (`check -assert`); `default_nettype none` in the top refuses
# implicit nets.
for cfg in 4:gen2 2:gen2 4:gen3; do
  n=${cfg%:*} pcie=${cfg#*:}
  dir=build/lint-de5net-$n-$pcie
  "$bin/nanet-board" --board de5net --ports "$n" --pcie "$pcie" --out "$dir" >/dev/null
  files="$dir/ip_stubs.v $dir/nanet_nic.v $dir/nanet_board_glue.v $dir/nanet_de5net.v"
  label="board top nanet_de5net ($n ports, $pcie)"
  if ! verilator --lint-only -Wall hdl/lint.vlt "$dir/lint.vlt" $files --top-module nanet_de5net; then
    echo "lint: verilator FAILED on $label"; fail=1; continue
  fi
  if ! yosys -q -l "$dir/yosys.log" -p "read_verilog $files; hierarchy -check -top nanet_de5net; proc; select -assert-none t:\$dlatch; check -assert" >/dev/null; then
    echo "lint: yosys FAILED on $label (see $dir/yosys.log)"; fail=1; continue
  fi
  echo "lint: $label ok (verilator -Wall, yosys: no latches, no undriven or multiply driven nets)"
done
exit $fail
