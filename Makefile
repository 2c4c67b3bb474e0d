# nanet: the commands a newcomer needs. `make help` lists them.
CARGO ?= cargo

.PHONY: help demo demo-core test c-example lint verilog bench docs tools clean

help:
	@echo "make demo     - four UDP streams into CLOPs through the host library on the simulated card"
	@echo "make demo-core - the offload core alone in simulation, with a real IP stack as its peer"
	@echo "make test     - every test, system tests also on the Verilog in lockstep, then lint"
	@echo "make lint     - verilator -Wall and yosys checks on every gateware module's Verilog"
	@echo "make verilog  - write the gateware's Verilog to build/verilog/"
	@echo "make bench    - benchmarks: table on stdout, JSON in target/bench/"
	@echo "make docs     - regenerate docs/regmap.md and host/include/nanet_regs.h from the contract"

tools:
	@scripts/ensure-tools.sh

# The full story: the host library opens the simulated card (Verilator on the generated Verilog),
# registers a CLOP per port, the far end of each link sends at 60% of line rate, and nanetctl shows what landed
# and the latency the card measured.
demo:
	$(CARGO) run --release -q -p nanet --bin nanetctl -- --device sim rx \
	  --stream 0:5000 --stream 1:5001 --stream 2:5002 --stream 3:5003 \
	  --sim-traffic 1024@6 --datagrams 3000 --duration 60

demo-core:
	$(CARGO) run --release -q -p nanet-sim --bin nanet-sim -- demo

# Every test on the rust-hdl model, then the system tests again with the model and the generated
# Verilog (Verilator) in lockstep: every output compared after every settle; two host-library tests
# on the simulated card in lockstep too (the others run on Verilator; all of them in lockstep take
# several minutes).
test: tools
	$(CARGO) test --release --workspace
	NANET_ENGINE=both $(CARGO) test --release -p nanet-sim --test system
	NANET_HOST_SIM=engine=both $(CARGO) test --release -p nanet --test api -- \
	  datagrams_land_in_order a_host_that_keeps_its_buffers
	$(MAKE) --no-print-directory c-example
	$(MAKE) --no-print-directory lint

# The C API's example, built against libnanet_c.so and run on the simulated card.
c-example:
	$(CARGO) build --release -q -p nanet-c
	mkdir -p build/c
	cc -std=c11 -Wall -Wextra -Werror -Ihost/include host/examples/c/rx.c -Ltarget/release -lnanet_c -o build/c/rx
	LD_LIBRARY_PATH=target/release ./build/c/rx

lint: tools
	@scripts/lint.sh

verilog:
	$(CARGO) run --release -q -p nanet-hdl --bin nanet-verilog -- --out build/verilog

docs:
	$(CARGO) run -q -p nanet-contract --bin nanet-docs -- .

bench:
	$(CARGO) run --release -q -p nanet-sim --bin nanet-sim -- bench --out target/bench
	$(CARGO) run --release -q -p nanet --bin nanet-host-bench -- --out target/bench

clean:
	rm -rf build target/bench target/verilator
