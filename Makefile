# nanet: the commands a newcomer needs. `make help` lists them.
CARGO ?= cargo

.PHONY: help demo demo-loopback demo-core test test-long list-long host-examples hardware-only aarch64 skipped-why c-example lint timing timing-check verilog bench check-docs docs tools clean

help:
	@echo "make demo     - four UDP streams into CLOPs through the host library on the simulated card (PCIE=gen3: the Gen3 card)"
	@echo "make demo-loopback - the paper's loopback: port 0's generator into a CLOP on port 1, time of flight"
	@echo "make demo-core - the offload core alone in simulation, with a real IP stack as its peer"
	@echo "make test     - every test (cargo nextest), system tests on the model and the Verilog in lockstep (the longest on Verilator), lint, the one-port Gen3 card's timing; SHARD=k/n runs share k of n (CI over n machines)"
	@echo "make test-long - make test, then the longest system tests and every host test in lockstep, the other system tests on Verilator alone, the timing of every other card"
	@echo "make list-long - the LONG tests (make test runs them on Verilator alone, make test-long in lockstep)"
	@echo "make aarch64  - the host library compiled for AArch64 (Grace Hopper), its device barriers checked in the code"
	@echo "make lint     - verilator -Wall and yosys checks on every gateware module's Verilog"
	@echo "make timing   - static timing estimate of the one- and four-port cards at Gen2 x8 and Gen3 x8 (yosys, ~60 min; TIMING_PORTS=1: ~15, TIMING_PCIE=gen2 for one variant)"
	@echo "make verilog  - the gateware's Verilog to build/verilog/ and the Quartus project to build/BOARD/ (BOARD=de5net, PORTS=1..4, PCIE=gen2|gen3)"
	@echo "make bench    - benchmarks: table on stdout, JSON in target/bench/"
	@echo "make check-docs - the figures README.md and docs/performance.md state, against target/bench/*.json (after make bench)"
	@echo "make docs     - regenerate docs/regmap.md and host/include/nanet_regs.h from the contract"

tools:
	@scripts/ensure-tools.sh

# Every cargo command here builds the whole workspace with the same features, so each crate
# compiles once: a command for one package (`cargo run -p X`) resolves features anew, and in
# make test that compiled rust-hdl, the gateware, the simulator and the host library a second
# time (the library four times). BUILD names the examples too: they take the dev-dependencies,
# so cargo resolves features as for the test build and reuses its artifacts (without them,
# proptest's `std` of bitflags is missing under ctrlc, and nanet-sim, the host library and the
# CLI compiled again: 84 s of make test). `$(call run,BIN)` builds the binaries that way and runs BIN.
WORKSPACE = --workspace --features nanet/gpu
BUILD = $(CARGO) build --release -q $(WORKSPACE) --examples
run = $(BUILD) --bins && target/release/$(1)

# The full story: the host library opens the simulated card (Verilator on the generated Verilog),
# registers a CLOP per port, the far end of each link sends at 60% of line rate, and nanetctl shows what landed
# and the latency the card measured. `make demo PCIE=gen3`: the Gen3 x8 card (256 bits).
demo: tools
	$(call run,nanetctl) --device sim:pcie=$(PCIE) rx \
	  --stream 0:5000 --stream 1:5001 --stream 2:5002 --stream 3:5003 \
	  --sim-traffic 1024@6 --datagrams 3000 --duration 60

# The paper's loopback on the simulated card: ports 0 and 1 cabled together, port 0's built-in
# generator sends 1024-byte datagrams at 5 Gb/s to port 1, which delivers them into a CLOP;
# nanetctl shows the rate, the card's latency and the time of flight it measured.
demo-loopback: tools
	$(call run,nanetctl) --device sim:loopback=0:1 rx \
	  --stream 1:5000 --gen 0:1024@5 --datagrams 3000 --duration 60

demo-core: tools
	$(call run,nanet-sim) demo

# Every test under cargo-nextest (each in its own process, two at a time, across all test
# binaries; .config/nextest.toml), with NANET_ENGINE=both: the system tests run the rust-hdl
# model and the generated Verilog (Verilator) in lockstep, every output compared after every
# settle, and the module tests always do; the host-library tests run on Verilator (the GPU
# feature on: its tests and the hardware tests are among them). The LONG tests (the longest
# system tests, `make list-long`) run on Verilator alone here: in lockstep the model
# takes 10 to 100 times as long as Verilator, and each of their designs except the two-port card,
# the four-port cards (their blocks do, in the module tests, and so does the one-port card at 256
# bits) and the receive path alone (its blocks do) also runs in lockstep in other tests.
# The LONG run goes beside the main run, one test at a time (its longest test takes two minutes:
# run after the main one, it left a core idle that long), its output shown after the main run's;
# an interrupt stops it too (a background job of a script ignores SIGINT).
# Then the doc tests, the examples and the C example.
# Lint and the timing check of the one-port Gen3 x8 card (a few minutes each on one core,
# mostly verilator and yosys; the Gen2 x8 card's is in make test-long) run beside all that,
# the build included (START_BESIDE below; output in target/lint-and-timing.log meanwhile); at the
# end make test shows their output and fails if either failed. `make test-long` adds what only
# repeats coverage; docs/testing.md says what runs where.
NEXTEST ?= $(CARGO) nextest run --release $(WORKSPACE)
# The C++ optimisation level of the Verilator models make test and make test-long build
# (NANET_VERILATOR_OPT, docs/testing.md "Engines"): their runs are short, and at -Og a card's
# model builds in 37% of the CPU time of -O3 (the four-port Gen2 card's verilator --build: 51 s
# instead of 136; 65 at -O1) and runs as fast as at -O1 (the quick card benchmark 7.1 s and 7.4).
# Benchmarks and the demos keep the default, 3. A NANET_VERILATOR_OPT of the caller's own
# environment wins.
TEST_VERILATOR_OPT ?= g
test test-long: export NANET_VERILATOR_OPT ?= $(TEST_VERILATOR_OPT)
LONG = binary(system) & (test(/^card::(credit_starvation|scarce_flow_control|four_ports_every_good_payload|a_card_generated_with_two_ports|the_generator_loops_back|a_real_ip_stack|interrupts_arrive|the_host_sends|the_card_describes|the_cards_reads_carry|reads_under_another_id|a_read_never_answered|a_failed_payload_read|bad_descriptors|generator_and_host_datagrams|unsupported_requests)/) | test(/^rx_path::(four_ports|an_overflowing|a_real_ip_stack|the_card_timestamps|empty_datagrams)/) | test(/^capture::a_slice_of_a_real_capture/) | test(/^bench_rx::/))
# The whole build in one cargo command (BUILD: the examples, binaries and tests; nextest's
# --no-run after it finds everything built), which starts the lint and timing job
# (scripts/lint-and-timing.sh) as soon as cargo has linked its three tools (scripts/cargo-then.py
# says why).
START_BESIDE = scripts/cargo-then.py --when nanet-verilog,nanet-board,nanet-timing --run 'scripts/lint-and-timing.sh start'
# The LONG run's output while it runs beside the main one (shown after the main run).
LONG_LOG = target/nextest-long.log
# The LONG run of make test (LONG appended), on Verilator, one test at a time.
LONG_RUN = NANET_ENGINE=verilator $(NEXTEST) $(PARTITION) --profile long --test-threads 1 -E
# `make test SHARD=k/n`: the k-th of n shares of make test, for CI spread over n machines (each a
# fresh clone running one share; all n together run what make test runs). Each nextest run takes
# its k-th of the tests by count in every test binary (cargo-nextest's --partition count:k/n);
# the doc tests, examples, AArch64 build and C example run in share 1, lint and the timing check
# in share n.
SHARD ?=
ifneq ($(SHARD),)
  SHARD_K := $(word 1,$(subst /, ,$(SHARD)))
  SHARD_N := $(word 2,$(subst /, ,$(SHARD)))
  ifneq ($(shell echo '$(SHARD)' | grep -Ex '[1-9][0-9]*/[1-9][0-9]*' >/dev/null && [ $(SHARD_K) -le $(SHARD_N) ] && echo ok),ok)
    $(error SHARD=$(SHARD): give k/n, share k of n with 1 <= k <= n (SHARD=1/2, SHARD=2/2))
  endif
  PARTITION = --partition count:$(SHARD) --no-tests=warn
  FIRST_SHARE = $(filter 1,$(SHARD_K))
  LAST_SHARE = $(filter $(SHARD_N),$(SHARD_K))
else
  FIRST_SHARE = all
  LAST_SHARE = all
endif
test: tools
	$(if $(LAST_SHARE),$(START_BESIDE) -- )$(BUILD) --bins --tests
	$(NEXTEST) --no-run
	@$(LONG_RUN) '$(LONG)' >$(LONG_LOG) 2>&1 & long=$$!; \
	trap 'kill $$long 2>/dev/null; exit 130' INT TERM HUP; \
	echo "the LONG tests run on Verilator beside the main run, one at a time (output after it; meanwhile $(LONG_LOG))"; \
	echo "NANET_ENGINE=both $(NEXTEST) $(PARTITION) -E 'not (LONG)'"; \
	NANET_ENGINE=both $(NEXTEST) $(PARTITION) -E 'not ($(LONG))'; main=$$?; \
	wait $$long; l=$$?; echo "the LONG run ($(LONG_RUN) 'LONG'):"; \
	cat $(LONG_LOG); \
	[ $$main = 0 ] || echo "make test: the main test run failed (above the LONG run)"; \
	[ $$l = 0 ] || echo "make test: the LONG run failed (above)"; \
	[ $$main = 0 ] && [ $$l = 0 ]
	@if [ -n "$(FIRST_SHARE)" ]; then \
	$(CARGO) test --release -q $(WORKSPACE) --doc && \
	$(MAKE) --no-print-directory host-examples hardware-only aarch64 c-example skipped-why; fi
	$(if $(LAST_SHARE),@scripts/lint-and-timing.sh wait)

# make test, then the LONG tests in lockstep, every host-library test in lockstep, the other
# system tests on Verilator alone (the engine a host program gets by default), and the timing of
# the cards make test does not time: one port at Gen2 x8, four ports at both PCIe variants (about
# an hour of yosys). It runs the code make test covers on more engines, cards and variants.
test-long: test
	NANET_ENGINE=both $(NEXTEST) --profile long -E '$(LONG)'
	NANET_HOST_SIM=engine=both $(NEXTEST) -E 'package(nanet) & binary(api)'
	NANET_ENGINE=verilator $(NEXTEST) -E 'binary(system) & not ($(LONG))'
	$(MAKE) --no-print-directory timing

# The LONG tests by name (LONG above is the one list of them).
list-long:
	$(CARGO) nextest list --release $(WORKSPACE) -E '$(LONG)'

# The host library's Rust examples, on the simulated card (see their headers for a real card).
host-examples:
	$(BUILD)
	target/release/examples/rx
	target/release/examples/loopback

# A program that only drives hardware builds the library without the simulator and without
# nanetctl's dependencies: neither rust-hdl nor clap may be among its dependencies.
hardware-only:
	@deps=$$($(CARGO) tree -q -p nanet -e normal --prefix none); \
	for c in rust-hdl nanet-sim smoltcp clap indicatif anyhow; do \
	  if echo "$$deps" | grep -q "^$$c v"; then echo "hardware-only: the library depends on $$c without the sim feature"; exit 1; fi; \
	done; echo "hardware-only: the library builds without the simulator and the CLI's crates"
	$(CARGO) build --release -q -p nanet

# The host library for an AArch64 host (Grace Hopper): it compiles, and its device barriers
# (src/barrier.rs) are in the code: one `dmb oshst` before the doorbell, `dmb osh` before the
# writes that hand memory back, `dmb oshld` between a record and its buffer.
AARCH64 = --release -q -p nanet --lib --features gpu --target aarch64-unknown-linux-gnu
aarch64:
	$(CARGO) rustc $(AARCH64) -- --emit asm
	@s=$$(ls -t target/aarch64-unknown-linux-gnu/release/deps/nanet-*.s | head -1); 	for b in oshst osh oshld; do 	  grep -Eq "dmb[[:space:]]+$$b\$$" "$$s" || { echo "aarch64: no dmb $$b in $$s"; exit 1; }; 	done; echo "aarch64: the library compiles for AArch64 with its dmb oshst, osh and oshld barriers"

# Why nextest skipped the tests it reported as SKIP: the hardware, GPU and Linux-peer tests each
# say, when they cannot run here, what they need (libtest-mimic; nextest shows no reasons).
skipped-why:
	@out=$$($(CARGO) test --release -q $(WORKSPACE) --test hardware --test linux_peer -- --list 2>&1) \
	  || { echo "$$out"; exit 1; }; \
	why=$$(echo "$$out" | grep ' ignored: '); \
	echo "skipped tests and why:"; if [ -n "$$why" ]; then echo "$$why" | sed 's/^/  /'; else echo "  none"; fi

# The C API's example, built against libnanet_c.so and run on the simulated card.
c-example: tools
	$(BUILD) --lib
	mkdir -p build/c
	cc -std=c11 -Wall -Wextra -Werror -Ihost/include host/examples/c/rx.c -Ltarget/release -lnanet_c -o build/c/rx
	LD_LIBRARY_PATH=target/release ./build/c/rx

lint: tools
	@$(BUILD) --bins && scripts/lint.sh

# Static timing estimate (boards/src/timing/): yosys maps the card to Intel ALMs, nanet-timing walks
# every path register to register per clock domain against the budgets of DESIGN.md ("Timing").
# Worst paths with RTL names on stdout, target/bench/timing.json; syntheses cached in
# target/bench/synth/. Fails when a path is over budget beyond what boards/timing-debt.toml
# tolerates while the pipelining goes on.
# TIMING_PORTS: the port counts, TIMING_PCIE: the PCIe variants (each count at each variant).
TIMING_PORTS ?= 1,4
TIMING_PCIE ?= gen2,gen3
timing: tools
	$(call run,nanet-timing) --ports $(TIMING_PORTS) --pcie $(TIMING_PCIE) \
	  --debt boards/timing-debt.toml --check

# The part of it `make test` runs: the one-port card at Gen3 x8 (the 256-bit datapath) and the
# board glue, summary only. The one-port Gen2 x8 card is timed by `make timing` and `make
# test-long` (its synthesis is 8 of make test's CPU minutes).
timing-check: tools
	@$(BUILD) --bins && scripts/lint-and-timing.sh timing-check

# BOARD: a board description in boards/ (the DE5-Net by default); PORTS=N: a card with N ports
# (1 to the board's SFP+ cages; the DE5-Net has four); PCIE: gen2 (Gen2 x8, a 128-bit core
# datapath) or gen3 (Gen3 x8, 256 bits), up to the board's generation.
BOARD ?= de5net
PORTS ?= 4
PCIE ?= gen2
verilog:
	$(call run,nanet-verilog) --out build/verilog --ports $(PORTS)
	target/release/nanet-board --board $(BOARD) --ports $(PORTS) --pcie $(PCIE) --out build/$(BOARD)

docs:
	$(CARGO) run -q -p nanet-contract --bin nanet-docs -- .

bench: tools
	$(call run,nanet-sim) bench --out target/bench
	target/release/nanet-host-bench --out target/bench
	target/release/nanet-timing --ports 1,4 --pcie gen2,gen3 --out target/bench \
	  --debt boards/timing-debt.toml --brief
	target/release/nanet-resources --out target/bench

# The figures README.md and docs/performance.md state, against the JSON make bench wrote; a file
# make bench did not write is listed as not checked.
check-docs:
	scripts/check-doc-figures.py

clean:
	rm -rf build target/bench target/verilator
