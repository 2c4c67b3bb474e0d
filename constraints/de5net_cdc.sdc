# Clock-domain crossings of the nanet card on the DE5-Net (hand-written; the generated
# nanet_de5net.sdc defines the clocks and their groups, this file names the crossings).
#
# The card has three clock domains: management (the management PLL's 100 MHz, from OSC_50_B3B),
# core (the Hard IP's coreclkout_hip, 250 MHz) and network (the 10GBASE-R PHY's XGMII clock,
# 156.25 MHz). They are asynchronous to each other (set_clock_groups in nanet_de5net.sdc); every
# signal that crosses
# goes through one of the structures below, whose first stage may go metastable and is given a
# false path here, so the crossing stays cut even if the clock groups are ever changed.
#
# rust-hdl makes each flip-flop an instance named after its field (its register is `q`), so the
# patterns below name fields of the gateware modules.

# Async FIFOs (hdl/src/common/async_fifo.rs): Gray-coded pointers through two flip-flops.
set_false_path -to [get_registers {*rgray_s1*}]
set_false_path -to [get_registers {*wgray_s1*}]

# Counters into the network domain (hdl/src/common/time_sync.rs): Gray-coded, two stages each; the
# core time, and each port's count of whole datagrams in its transmit FIFO (card/rx_path.rs).
set_false_path -to [get_registers {*timebase*s1*}]
set_false_path -to [get_registers {*tx_whole_sync*s1*}]

# Register bridge (hdl/src/card/reg_bridge.rs): toggle handshake through two flip-flops each way; the
# latched access and read data are stable from before each toggle until after its answer.
set_false_path -to [get_registers {*bridge*req_1*}]
set_false_path -to [get_registers {*bridge*ack_1*}]
set_false_path -from [get_registers {*bridge*held_*}]
set_false_path -from [get_registers {*bridge*rdata_hold*}]

# Board glue (hdl/src/board/glue.rs): the reset button, PERST#, the PLLs' lock and the
# domains' ready signals.
set_false_path -to [get_registers {*glue*button_1*}]
set_false_path -to [get_registers {*glue*perst_1*}]
set_false_path -to [get_registers {*glue*mgmt_pll_1*}]
set_false_path -to [get_registers {*glue*pll_1*}]
set_false_path -to [get_registers {*glue*core_1*}]
set_false_path -to [get_registers {*glue*net_1*}]
set_false_path -to [get_registers {*glue*mac_1*}]
# The Si570's I2C master (hdl/src/board/i2c_master.rs): SDA from the pin through two flip-flops.
set_false_path -to [get_registers {*glue*i2c*sda_1*}]

# The Hard IP's configuration bus (hdl/src/pcie/config_sampler.rs): multicycle paths, held for 4
# or 8 cycles; the sampler takes a value only once its address has held for three cycles.
set_multicycle_path -setup 2 -to [get_registers {*id_sampler*add_1* *id_sampler*busdev_1*}]
set_multicycle_path -hold 1 -to [get_registers {*id_sampler*add_1* *id_sampler*busdev_1*}]

# Asynchronous board inputs.
set_false_path -from [get_ports {CPU_RESET_n}]
set_false_path -from [get_ports {PCIE_PERST_n}]
set_false_path -from [get_ports {SFP*_LOS SFP*_MOD0_PRSNT_n SFP*_TXFAULT}]
set_false_path -to [get_ports {LED* SFP*_TXDISABLE SFP*_RATESEL* FAN_CTRL}]
# The Si570's I2C bus, at 100 kHz from registers: its timing is the master's quarter bits.
set_false_path -from [get_ports {CLOCK_SDA}]
set_false_path -to [get_ports {CLOCK_SCL CLOCK_SDA}]
