//! Register file of one offload core: configuration, ARP cache commands and the statistics
//! counters, on a simple register bus (word address, 32-bit data, one-cycle write strobe, read data
//! one cycle after the address). Addresses and reset values are those of
//! `nanet_contract::offload` (word = byte offset / 4); the testbench reaches every register through
//! the contract's names, so a mismatch fails a test.

use array_init::array_init;
use nanet_contract::offload::{
    Counter, ARP_RETRIES_DEFAULT, ARP_RETRY_INTERVAL_DEFAULT, ID_VALUE, TTL_DEFAULT, VERSION_VALUE,
};
use rust_hdl::prelude::*;

/// Number of counters (`nanet_contract::Counter`).
pub const COUNTERS: usize = Counter::COUNT;

#[derive(LogicBlock)]
pub struct OffloadRegs {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub addr: Signal<In, Bits<6>>,
    pub wdata: Signal<In, Bits<32>>,
    pub write: Signal<In, Bit>,
    pub rdata: Signal<Out, Bits<32>>,
    /// Bit i counts one event of counter i; the byte counters add `rx_bytes` / `tx_bytes` instead.
    pub events: Signal<In, Bits<32>>,
    pub rx_bytes: Signal<In, Bits<16>>,
    pub tx_bytes: Signal<In, Bits<16>>,
    pub arp_flushing: Signal<In, Bit>,
    pub arp_read_done: Signal<In, Bit>,
    pub arp_read_valid: Signal<In, Bit>,
    pub arp_read_ip: Signal<In, Bits<32>>,
    pub arp_read_mac: Signal<In, Bits<48>>,

    pub our_mac: Signal<Out, Bits<48>>,
    pub our_ip: Signal<Out, Bits<32>>,
    pub netmask: Signal<Out, Bits<32>>,
    pub gateway: Signal<Out, Bits<32>>,
    pub udp_tx_checksum: Signal<Out, Bit>,
    pub arp_retry_interval: Signal<Out, Bits<32>>,
    pub arp_retries: Signal<Out, Bits<8>>,
    /// TTL of the IPv4 packets the port sends.
    pub ttl: Signal<Out, Bits<8>>,
    pub arp_flush: Signal<Out, Bit>,
    pub arp_add_static: Signal<Out, Bit>,
    pub arp_static_ip: Signal<Out, Bits<32>>,
    pub arp_static_mac: Signal<Out, Bits<48>>,
    pub arp_read_start: Signal<Out, Bit>,
    pub arp_read_index: Signal<Out, Bits<8>>,

    id: Constant<Bits<32>>,
    version: Constant<Bits<32>>,
    retry_interval_default: Constant<Bits<32>>,
    retries_default: Constant<Bits<8>>,
    ttl_default: Constant<Bits<8>>,
    mac_hi: DFF<Bits<16>>,
    mac_lo: DFF<Bits<32>>,
    ip: DFF<Bits<32>>,
    mask: DFF<Bits<32>>,
    gw: DFF<Bits<32>>,
    control: DFF<Bits<32>>,
    st_ip: DFF<Bits<32>>,
    st_mac_hi: DFF<Bits<16>>,
    st_mac_lo: DFF<Bits<32>>,
    retry_interval: DFF<Bits<32>>,
    retries: DFF<Bits<8>>,
    ttl_q: DFF<Bits<8>>,
    cmd_flush: DFF<Bit>,
    cmd_add: DFF<Bit>,
    cmd_read: DFF<Bit>,
    read_index: DFF<Bits<8>>,
    counters: [DFF<Bits<32>>; COUNTERS],
    rdata_q: DFF<Bits<32>>,
}

impl Default for OffloadRegs {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            addr: Default::default(),
            wdata: Default::default(),
            write: Default::default(),
            rdata: Default::default(),
            events: Default::default(),
            rx_bytes: Default::default(),
            tx_bytes: Default::default(),
            arp_flushing: Default::default(),
            arp_read_done: Default::default(),
            arp_read_valid: Default::default(),
            arp_read_ip: Default::default(),
            arp_read_mac: Default::default(),
            our_mac: Default::default(),
            our_ip: Default::default(),
            netmask: Default::default(),
            gateway: Default::default(),
            udp_tx_checksum: Default::default(),
            arp_retry_interval: Default::default(),
            arp_retries: Default::default(),
            ttl: Default::default(),
            arp_flush: Default::default(),
            arp_add_static: Default::default(),
            arp_static_ip: Default::default(),
            arp_static_mac: Default::default(),
            arp_read_start: Default::default(),
            arp_read_index: Default::default(),
            id: Constant::new((ID_VALUE as u64).into()),
            version: Constant::new((VERSION_VALUE as u64).into()),
            retry_interval_default: Constant::new((ARP_RETRY_INTERVAL_DEFAULT as u64).into()),
            retries_default: Constant::new((ARP_RETRIES_DEFAULT as u64).into()),
            ttl_default: Constant::new((TTL_DEFAULT as u64).into()),
            mac_hi: Default::default(),
            mac_lo: Default::default(),
            ip: Default::default(),
            mask: Default::default(),
            gw: Default::default(),
            control: Default::default(),
            st_ip: Default::default(),
            st_mac_hi: Default::default(),
            st_mac_lo: Default::default(),
            retry_interval: Default::default(),
            retries: Default::default(),
            ttl_q: Default::default(),
            cmd_flush: Default::default(),
            cmd_add: Default::default(),
            cmd_read: Default::default(),
            read_index: Default::default(),
            counters: array_init(|_| Default::default()),
            rdata_q: Default::default(),
        }
    }
}

impl Logic for OffloadRegs {
    // rust-hdl's subset, translated to Verilog as written (clippy's rewrite would change it).
    #[allow(clippy::collapsible_match)]
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            mac_hi,
            mac_lo,
            ip,
            mask,
            gw,
            control,
            st_ip,
            st_mac_hi,
            st_mac_lo,
            retry_interval,
            retries,
            ttl_q,
            cmd_flush,
            cmd_add,
            cmd_read,
            read_index,
            rdata_q
        );
        for i in 0..COUNTERS {
            self.counters[i].clock.next = self.clock.val();
            self.counters[i].d.next = self.counters[i].q.val();
        }
        self.our_mac.next = (bit_cast::<48, 16>(self.mac_hi.q.val()) << 32)
            | bit_cast::<48, 32>(self.mac_lo.q.val());
        self.our_ip.next = self.ip.q.val();
        self.netmask.next = self.mask.q.val();
        self.gateway.next = self.gw.q.val();
        self.udp_tx_checksum.next = self.control.q.val().get_bit(0);
        self.arp_retry_interval.next = self.retry_interval.q.val();
        self.arp_retries.next = self.retries.q.val();
        self.ttl.next = self.ttl_q.q.val();
        self.arp_static_ip.next = self.st_ip.q.val();
        self.arp_static_mac.next = (bit_cast::<48, 16>(self.st_mac_hi.q.val()) << 32)
            | bit_cast::<48, 32>(self.st_mac_lo.q.val());
        self.arp_flush.next = self.cmd_flush.q.val();
        self.arp_add_static.next = self.cmd_add.q.val();
        self.arp_read_start.next = self.cmd_read.q.val();
        self.arp_read_index.next = self.read_index.q.val();
        self.rdata.next = self.rdata_q.q.val();

        // Counters (Counter::RxBytes = 1 and Counter::TxBytes = 3 count bytes).
        for i in 0..COUNTERS {
            if self.events.val().get_bit(i) {
                self.counters[i].d.next = self.counters[i].q.val() + 1;
            }
        }
        if self.events.val().get_bit(1) {
            self.counters[1].d.next =
                self.counters[1].q.val() + bit_cast::<32, 16>(self.rx_bytes.val());
        }
        if self.events.val().get_bit(3) {
            self.counters[3].d.next =
                self.counters[3].q.val() + bit_cast::<32, 16>(self.tx_bytes.val());
        }

        // Writes (word addresses of nanet_contract::Reg).
        self.cmd_flush.d.next = false;
        self.cmd_add.d.next = false;
        self.cmd_read.d.next = false;
        if self.write.val() {
            match self.addr.val().index() {
                2 => self.mac_hi.d.next = self.wdata.val().get_bits::<16>(0),
                3 => self.mac_lo.d.next = self.wdata.val(),
                4 => self.ip.d.next = self.wdata.val(),
                5 => self.mask.d.next = self.wdata.val(),
                6 => self.gw.d.next = self.wdata.val(),
                7 => self.control.d.next = self.wdata.val(),
                8 => {
                    self.cmd_flush.d.next = self.wdata.val() == 1;
                    self.cmd_add.d.next = self.wdata.val() == 2;
                }
                9 => self.st_ip.d.next = self.wdata.val(),
                10 => self.st_mac_hi.d.next = self.wdata.val().get_bits::<16>(0),
                11 => self.st_mac_lo.d.next = self.wdata.val(),
                12 => self.retry_interval.d.next = self.wdata.val(),
                13 => self.retries.d.next = self.wdata.val().get_bits::<8>(0),
                // A TTL of 0 is refused (RFC 1122 3.2.1.7: never sent); the register keeps its value.
                15 => {
                    if self.wdata.val().get_bits::<8>(0).any() {
                        self.ttl_q.d.next = self.wdata.val().get_bits::<8>(0);
                    }
                }
                // ArpRead::Command
                48 => {
                    self.read_index.d.next = self.wdata.val().get_bits::<8>(0);
                    self.cmd_read.d.next = true;
                }
                _ => {}
            }
        }

        // Reads.
        self.rdata_q.d.next = 0.into();
        match self.addr.val().index() {
            0 => self.rdata_q.d.next = self.id.val(),
            1 => self.rdata_q.d.next = self.version.val(),
            2 => self.rdata_q.d.next = bit_cast::<32, 16>(self.mac_hi.q.val()),
            3 => self.rdata_q.d.next = self.mac_lo.q.val(),
            4 => self.rdata_q.d.next = self.ip.q.val(),
            5 => self.rdata_q.d.next = self.mask.q.val(),
            6 => self.rdata_q.d.next = self.gw.q.val(),
            7 => self.rdata_q.d.next = self.control.q.val(),
            9 => self.rdata_q.d.next = self.st_ip.q.val(),
            10 => self.rdata_q.d.next = bit_cast::<32, 16>(self.st_mac_hi.q.val()),
            11 => self.rdata_q.d.next = self.st_mac_lo.q.val(),
            12 => self.rdata_q.d.next = self.retry_interval.q.val(),
            13 => self.rdata_q.d.next = bit_cast::<32, 8>(self.retries.q.val()),
            15 => self.rdata_q.d.next = bit_cast::<32, 8>(self.ttl_q.q.val()),
            // A flush command written last cycle counts as in progress already.
            14 => {
                self.rdata_q.d.next =
                    bit_cast::<32, 1>((self.arp_flushing.val() | self.cmd_flush.q.val()).into())
            }
            // ArpRead: a read written last cycle is not done yet.
            48 => {
                self.rdata_q.d.next =
                    (bit_cast::<32, 1>((self.arp_read_done.val() & !self.cmd_read.q.val()).into())
                        << 31)
                        | (bit_cast::<32, 1>(self.arp_read_valid.val().into()) << 30)
                        | bit_cast::<32, 8>(self.read_index.q.val())
            }
            49 => self.rdata_q.d.next = self.arp_read_ip.val(),
            50 => {
                self.rdata_q.d.next = bit_cast::<32, 16>(self.arp_read_mac.val().get_bits::<16>(32))
            }
            51 => self.rdata_q.d.next = self.arp_read_mac.val().get_bits::<32>(0),
            _ => {}
        }
        for i in 0..COUNTERS {
            if self.addr.val().index() == (i + 16) {
                self.rdata_q.d.next = self.counters[i].q.val();
            }
        }

        if self.reset.val() {
            self.mac_hi.d.next = 0.into();
            self.mac_lo.d.next = 0.into();
            self.ip.d.next = 0.into();
            self.mask.d.next = 0.into();
            self.gw.d.next = 0.into();
            self.control.d.next = 0.into();
            self.retry_interval.d.next = self.retry_interval_default.val();
            self.retries.d.next = self.retries_default.val();
            self.ttl_q.d.next = self.ttl_default.val();
            for i in 0..COUNTERS {
                self.counters[i].d.next = 0.into();
            }
        }
    }
}
