//! Register map of one port's UDP/IPv4/ARP offload core.
//!
//! The core is reached through a simple register bus: a word address (`byte offset / 4`, 6 bits),
//! 32-bit write data with a one-cycle write strobe, and read data one clock after the address.
//! Every address is 32 bits wide; MAC addresses are split into a high half (bytes 0..1 of the address,
//! in bits 15:0) and a low half (bytes 2..5). IPv4 addresses are the usual big-endian `u32`
//! (`192.168.1.2` is `0xC0A8_0102`).
//!
//! Counters are 32 bits, wrap around, and are cleared by reset only.

use crate::regdef::registers;

/// Value of [`Reg::Id`]: ASCII "NNET".
pub const ID_VALUE: u32 = 0x4E4E_4554;
/// Value of [`Reg::Version`]: major in 31:16, minor in 15:0.
pub const VERSION_VALUE: u32 = 0x0001_0001;
/// Number of address bits of the register bus (word addresses).
pub const ADDR_BITS: usize = 6;

/// Bit of [`Reg::Control`]: compute the UDP checksum of transmitted datagrams (store-and-forward);
/// when clear, transmitted datagrams carry checksum 0 and go out cut-through.
pub const CONTROL_UDP_TX_CHECKSUM: u32 = 1 << 0;
/// Value written to [`Reg::ArpCommand`] to invalidate every ARP cache entry.
pub const ARP_COMMAND_FLUSH: u32 = 1;
/// Value written to [`Reg::ArpCommand`] to add the entry held in the `ArpStatic*` registers.
pub const ARP_COMMAND_ADD_STATIC: u32 = 2;
/// Bit of [`Reg::Status`]: an ARP cache flush is in progress (lookups miss meanwhile).
pub const STATUS_ARP_FLUSHING: u32 = 1 << 0;

/// Reset value of [`Reg::ArpRetryInterval`]: 1 ms at 156.25 MHz.
pub const ARP_RETRY_INTERVAL_DEFAULT: u32 = 156_250;
/// Reset value of [`Reg::ArpRetries`]: ARP requests sent for one held packet before it is dropped.
pub const ARP_RETRIES_DEFAULT: u32 = 3;

/// Reset value of [`Reg::Ttl`]: the TTL of the IPv4 packets the port sends.
pub const TTL_DEFAULT: u32 = 64;

/// Number of entries of the ARP cache (direct mapped on the low byte of the IPv4 address).
pub const ARP_CACHE_ENTRIES: usize = 256;
/// Largest frame accepted, without FCS (1500-byte MTU + 14-byte Ethernet header).
pub const MAX_FRAME_BYTES: usize = 1514;
/// Smallest frame accepted, without FCS (64-byte minimum frame less the 4-byte FCS).
pub const MIN_FRAME_BYTES: usize = 60;
/// Largest UDP payload in one frame without IP options.
pub const MAX_UDP_PAYLOAD: usize = 1472;

registers! {
    /// Configuration and control registers of one port's offload core.
    Reg at 0; {
        /// Read-only [`ID_VALUE`].
        Id = 0, "id";
        /// Read-only [`VERSION_VALUE`].
        Version = 1, "version";
        /// Our MAC address, bytes 0..1 in bits 15:0.
        MacHi = 2, "mac_hi";
        /// Our MAC address, bytes 2..5.
        MacLo = 3, "mac_lo";
        /// Our IPv4 address.
        Ip = 4, "ip";
        /// Netmask of our subnet; destinations outside it go through the gateway.
        Netmask = 5, "netmask";
        /// IPv4 address of the default gateway.
        Gateway = 6, "gateway";
        /// Control bits (`CONTROL_*`).
        Control = 7, "control";
        /// Write-only command to the ARP cache (`ARP_COMMAND_*`).
        ArpCommand = 8, "arp_command";
        /// IPv4 address of the static ARP entry to add.
        ArpStaticIp = 9, "arp_static_ip";
        /// MAC of the static ARP entry to add, bytes 0..1 in bits 15:0.
        ArpStaticMacHi = 10, "arp_static_mac_hi";
        /// MAC of the static ARP entry to add, bytes 2..5.
        ArpStaticMacLo = 11, "arp_static_mac_lo";
        /// Clock cycles between ARP requests for a packet waiting on resolution.
        ArpRetryInterval = 12, "arp_retry_interval";
        /// ARP requests sent for one waiting packet before it is dropped (counted as
        /// [`Counter::TxDropArpTimeout`]).
        ArpRetries = 13, "arp_retries";
        /// Read-only status bits (`STATUS_*`).
        Status = 14, "status";
        /// TTL of every IPv4 packet the port sends (UDP datagrams, echo replies), bits 7:0;
        /// [`TTL_DEFAULT`] after reset. A write of 0 is ignored (RFC 1122 3.2.1.7: a host never
        /// sends TTL 0). Since offload version 1.1.
        Ttl = 15, "ttl";
    }
}

registers! {
    /// Readout of the ARP cache, one entry at a time: write the entry's index (the low byte of
    /// the IPv4 address it holds) to `arp_read`, wait until `arp_read` reads back with
    /// [`ARP_READ_DONE`], then read the entry.
    ArpRead at 0x30; {
        /// Write: entry index in bits 7:0, starts the read. Read: [`ARP_READ_DONE`],
        /// [`ARP_READ_VALID`] (the entry holds an address), the index in bits 7:0.
        Command = 0, "arp_read";
        /// The entry's IPv4 address.
        Ip = 1, "arp_read_ip";
        /// The entry's MAC, bytes 0..1 in bits 15:0.
        MacHi = 2, "arp_read_mac_hi";
        /// The entry's MAC, bytes 2..5.
        MacLo = 3, "arp_read_mac_lo";
    }
}

/// Bit of [`ArpRead::Command`]: the read started by the last write is done.
pub const ARP_READ_DONE: u32 = 1 << 31;
/// Bit of [`ArpRead::Command`]: the entry read is valid.
pub const ARP_READ_VALID: u32 = 1 << 30;

/// Calls macro `$m` with the list of receive drop reasons (doc comments and names, in counter
/// order). It is the one list: [`DropReason`] here and the gateware's own enum are built from it.
#[macro_export]
macro_rules! with_drop_reasons {
    ($m:ident) => {
        $m! {
            /// The MAC flagged the frame (bad FCS, PHY error) at end of packet.
            MacError,
            /// Shorter than the 60-byte minimum frame (without FCS).
            Runt,
            /// Longer than 1514 bytes (without FCS).
            Oversize,
            /// Destination MAC neither ours nor broadcast, destination IP not ours, or an ARP packet
            /// whose target is another host.
            NotForUs,
            /// IPv4 version other than 4, or a header length other than 5 words (options).
            IpVersionIhl,
            /// IPv4 header checksum wrong.
            IpChecksum,
            /// IPv4 total length below the header size or beyond the end of the frame (truncated).
            IpLength,
            /// A fragment (more-fragments set or a non-zero fragment offset).
            Fragment,
            /// UDP length field inconsistent with the IPv4 total length.
            UdpLength,
            /// UDP checksum present (non-zero) and wrong.
            UdpChecksum,
            /// EtherType other than IPv4/ARP, IP protocol other than UDP/ICMP, ICMP other than echo
            /// request, ARP other than Ethernet/IPv4 request or reply.
            UnknownProtocol,
            /// ICMP echo request with a wrong ICMP checksum.
            IcmpInvalid,
            /// ICMP echo request received while the previous reply was still pending.
            IcmpBusy,
            /// UDP or ICMP from a source that is not a single host (RFC 1122 3.2.1.3: a host
            /// silently discards such datagrams): limited broadcast (255.255.255.255) or class E
            /// (240/4), multicast (224/4), loopback (127/8), our subnet's broadcast address, or
            /// 0.0.0.0 (allowed for UDP only, as a host learning its address sends it).
            BadSource,
        }
    };
}

macro_rules! define_drop_reason {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// Why a received frame was dropped. Each reason has its own counter.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum DropReason {
            $($(#[doc = $doc])* $name,)*
        }

        impl DropReason {
            pub const ALL: [DropReason; [$(DropReason::$name),*].len()] = [$(DropReason::$name),*];

            /// The reason's documentation, one entry per line.
            pub const fn doc(self) -> &'static [&'static str] {
                match self {
                    $(DropReason::$name => &[$($doc),*],)*
                }
            }
        }
    };
}
with_drop_reasons!(define_drop_reason);

impl DropReason {
    pub const fn counter(self) -> Counter {
        match self {
            DropReason::MacError => Counter::DropMacError,
            DropReason::Runt => Counter::DropRunt,
            DropReason::Oversize => Counter::DropOversize,
            DropReason::NotForUs => Counter::DropNotForUs,
            DropReason::IpVersionIhl => Counter::DropIpVersionIhl,
            DropReason::IpChecksum => Counter::DropIpChecksum,
            DropReason::IpLength => Counter::DropIpLength,
            DropReason::Fragment => Counter::DropFragment,
            DropReason::UdpLength => Counter::DropUdpLength,
            DropReason::UdpChecksum => Counter::DropUdpChecksum,
            DropReason::UnknownProtocol => Counter::DropUnknownProtocol,
            DropReason::IcmpInvalid => Counter::DropIcmpInvalid,
            DropReason::IcmpBusy => Counter::DropIcmpBusy,
            DropReason::BadSource => Counter::DropBadSource,
        }
    }

    pub const fn name(self) -> &'static str {
        self.counter().name()
    }
}

/// Byte offset of the first counter.
pub const COUNTER_BASE: u32 = 0x40;

registers! {
    /// Statistics counters, read-only, 32 bits each (wrapping), from [`COUNTER_BASE`].
    Counter at COUNTER_BASE / 4; {
        /// UDP datagrams delivered on the RX output without error.
        RxPackets = 0, "rx_packets";
        /// UDP payload bytes of those datagrams.
        RxBytes = 1, "rx_bytes";
        /// UDP datagrams transmitted.
        TxPackets = 2, "tx_packets";
        /// UDP payload bytes of those datagrams.
        TxBytes = 3, "tx_bytes";
        /// ARP requests for our address received.
        ArpRequestsIn = 4, "arp_requests_in";
        /// ARP replies addressed to us received.
        ArpRepliesIn = 5, "arp_replies_in";
        /// ARP replies sent.
        ArpRepliesOut = 6, "arp_replies_out";
        /// ARP requests sent (on a TX cache miss).
        ArpRequestsOut = 7, "arp_requests_out";
        /// ICMP echo replies sent.
        IcmpEchoReplies = 8, "icmp_echo_replies";
        DropMacError = 9, "drop_mac_error";
        DropRunt = 10, "drop_runt";
        DropOversize = 11, "drop_oversize";
        DropNotForUs = 12, "drop_not_for_us";
        DropIpVersionIhl = 13, "drop_ip_version_ihl";
        DropIpChecksum = 14, "drop_ip_checksum";
        DropIpLength = 15, "drop_ip_length";
        DropFragment = 16, "drop_fragment";
        DropUdpLength = 17, "drop_udp_length";
        DropUdpChecksum = 18, "drop_udp_checksum";
        DropUnknownProtocol = 19, "drop_unknown_protocol";
        DropIcmpInvalid = 20, "drop_icmp_invalid";
        DropIcmpBusy = 21, "drop_icmp_busy";
        /// Transmit requests dropped because the next hop did not answer ARP in time.
        TxDropArpTimeout = 22, "tx_drop_arp_timeout";
        /// Transmit requests dropped because the payload is longer than [`MAX_UDP_PAYLOAD`].
        TxDropLength = 23, "tx_drop_length";
        /// ARP replies not sent because a newer request arrived while the reply still waited for the
        /// transmitter (the newer requester is answered; the older one asks again).
        ArpRepliesDropped = 24, "arp_replies_dropped";
        /// Since offload version 1.1.
        DropBadSource = 25, "drop_bad_source";
    }
}

impl Counter {
    pub fn drop_reason(self) -> Option<DropReason> {
        DropReason::ALL.into_iter().find(|r| r.counter() == self)
    }
}

/// Splits a MAC address into the (hi, lo) register pair.
pub fn mac_to_regs(mac: [u8; 6]) -> (u32, u32) {
    (
        u32::from_be_bytes([0, 0, mac[0], mac[1]]),
        u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]),
    )
}

/// Joins the (hi, lo) register pair into a MAC address.
pub fn mac_from_regs(hi: u32, lo: u32) -> [u8; 6] {
    let h = hi.to_be_bytes();
    let l = lo.to_be_bytes();
    [h[2], h[3], l[0], l[1], l[2], l[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_and_counter_addresses_are_distinct_and_fit_the_bus() {
        let mut seen = std::collections::BTreeSet::new();
        for r in Reg::ALL {
            assert!(
                r.offset() < COUNTER_BASE,
                "{} overlaps the counters",
                r.name()
            );
            assert!(seen.insert(r.offset()));
        }
        for (i, c) in Counter::ALL.into_iter().enumerate() {
            assert_eq!(c.index(), i);
            assert!(seen.insert(c.offset()));
            assert!(c.word() < (1 << ADDR_BITS), "{} beyond the bus", c.name());
        }
    }

    #[test]
    fn arp_readout_sits_after_the_counters_on_the_bus() {
        let last_counter = Counter::ALL.iter().map(|c| c.word()).max().unwrap();
        for r in ArpRead::ALL {
            assert!(r.word() > last_counter && r.word() < (1 << ADDR_BITS));
        }
    }

    #[test]
    fn every_drop_reason_has_its_own_counter() {
        let counters: std::collections::BTreeSet<_> =
            DropReason::ALL.iter().map(|r| r.counter()).collect();
        assert_eq!(counters.len(), DropReason::ALL.len());
        for r in DropReason::ALL {
            assert_eq!(r.counter().drop_reason(), Some(r));
        }
    }

    #[test]
    fn mac_register_split_round_trips() {
        let mac = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
        let (hi, lo) = mac_to_regs(mac);
        assert_eq!((hi, lo), (0x0211, 0x2233_4455));
        assert_eq!(mac_from_regs(hi, lo), mac);
    }
}
