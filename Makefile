# nanet: the commands a newcomer needs. `make help` lists them.
CARGO ?= cargo

.PHONY: help demo test lint verilog bench docs tools clean

help:
	@echo "make demo     - the offload core in simulation, with a real IP stack as its peer"
	@echo "make test     - every test, system tests also on the Verilog in lockstep, then lint"
	@echo "make lint     - verilator -Wall and yosys checks on every gateware module's Verilog"
	@echo "make verilog  - write the gateware's Verilog to build/verilog/"
	@echo "make bench    - benchmarks: table on stdout, JSON in target/bench/"
	@echo "make docs     - regenerate docs/regmap.md and host/include/nanet_regs.h from the contract"

tools:
	@scripts/ensure-tools.sh

demo:
	$(CARGO) run --release -q -p nanet-sim --bin nanet-sim -- demo

# Every test on the rust-hdl model, then the system tests again with the model and the generated
# Verilog (Verilator) in lockstep: every output compared after every settle.
test: tools
	$(CARGO) test --release --workspace
	NANET_ENGINE=both $(CARGO) test --release -p nanet-sim --test system
	$(MAKE) --no-print-directory lint

lint: tools
	@scripts/lint.sh

verilog:
	$(CARGO) run --release -q -p nanet-hdl --bin nanet-verilog -- --out build/verilog

docs:
	$(CARGO) run -q -p nanet-contract --bin nanet-docs -- .

bench:
	$(CARGO) run --release -q -p nanet-sim --bin nanet-sim -- bench --out target/bench

clean:
	rm -rf build target/bench target/verilator
