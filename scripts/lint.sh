#!/usr/bin/env bash
# Lints the Verilog of every gateware module: verilator --lint-only -Wall (waivers with their reasons
# in hdl/lint.vlt) and yosys `hierarchy -check; proc` with an assertion that no latch was inferred.
# The modules that have ports are built for the default four; the NIC top is linted with 1 and 3
# ports on its own, and with 4 (Gen2 and Gen3) and 2 inside the DE5-net board tops, whose files
# hold the very same nanet_nic.v (so the four-port cards and the two-port card are not generated
# or linted a second time on their own). yosys's latch check skips the composites (`COMPOSITES`,
# built at four ports): their blocks are checked alone, and the four-port board tops hold the
# same modules, where yosys checks them again (45 of lint's 300 CPU seconds otherwise).
set -euo pipefail
bin=target/release
for b in nanet-verilog nanet-board; do
  [ -x "$bin/$b" ] || { echo "lint: $bin/$b missing: run make lint (it builds it)" >&2; exit 1; }
done
out=build/verilog
fail=0

# Modules made of other linted modules and inside the four-port cards (see above).
COMPOSITES=" nanet_rx_path nanet_rx_path_256 nanet_rx_engine nanet_rx_engine_256 nanet_rx_port nanet_rx_port_256 nanet_tx_rings nanet_tx_rings_256 "

lint_one() { # lint_one FILE TOP LABEL [verilator-only]
  local v=$1 top=$2 label=$3
  if ! verilator --lint-only -Wall hdl/lint.vlt "$v" --top-module "$top"; then
    echo "lint: verilator FAILED on $label"; fail=1; return
  fi
  if [ -n "${4:-}" ]; then
    echo "lint: $label ok (verilator -Wall; yosys checks its modules in the four-port board tops)"; return
  fi
  if ! yosys -q -l "${v%.v}.yosys.log" -p "read_verilog $v; hierarchy -check -top $top; proc; select -assert-none t:\$dlatch" >/dev/null; then
    echo "lint: yosys FAILED on $label (undriven nets, missing modules or latches; see ${v%.v}.yosys.log)"; fail=1; return
  fi
  echo "lint: $label ok (verilator -Wall, yosys: no latches)"
}

# Every module but the four-port cards (in the board tops below).
modules=$("$bin/nanet-verilog" --list | grep -vx -e nanet_nic -e nanet_nic_256)
# shellcheck disable=SC2086 # one argument per module
"$bin/nanet-verilog" --out "$out" $modules >/dev/null
for top in $modules; do
  composite=
  case $COMPOSITES in *" $top "*) composite=yes ;; esac
  lint_one "$out/$top.v" "$top" "$top" $composite
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
