//! Register map of the receive engine (CLOPs, TLB, DMA, event queue, interrupt) and the layout of
//! what it writes into CLOP buffers.
//!
//! The engine sits in the 250 MHz core domain behind a register bus like the offload core's: word
//! addresses (8 bits), 32-bit write data with a one-cycle strobe, read data one clock after the
//! address. 64-bit values are split into `*Lo` (bits 31:0) and `*Hi` (bits 63:32) registers.
//!
//! # CLOPs
//! A CLOP (circular list of persistent buffers) receives the datagrams of one stream: stream key
//! `port * 16 + Multi-Stream entry`, so up to [`CLOPS`] of them. Its buffers are `count` buffers of
//! `size` bytes, back to back from a page-aligned virtual `base`; its pages are translated by TLB
//! slots `first_slot..first_slot + pages`. To (re)configure CLOP `c`: write the `Clop*` staging
//! registers, then [`RxReg::ClopCommand`] with `c | CLOP_OP_CONFIGURE << 8`; to stop it,
//! `c | CLOP_OP_DISABLE << 8`. The command is done (and, for a disable, no write to the CLOP's
//! buffers can follow) when [`RxReg::ClopCommand`] reads back without [`CLOP_COMMAND_BUSY`]; it
//! was refused, and changed nothing, when the read-back has [`CLOP_COMMAND_REFUSED`]. An enabled
//! CLOP is disabled before it is configured again.
//!
//! Buffers are free (the card may fill them) or held (by the host, after the card reported them
//! closed in an event). The host gives a held buffer back by writing [`RxReg::Release`].

use crate::events::Field;
use crate::regdef::registers;

/// CLOPs (stream keys: 4 ports x 16 Multi-Stream entries).
pub const CLOPS: usize = 64;
/// Most buffers in one CLOP.
pub const MAX_BUFFERS: usize = 256;
/// Largest buffer (24-bit size field).
pub const MAX_BUFFER_BYTES: usize = (1 << 24) - 1;
/// Entries of the TLB.
pub const TLB_ENTRIES: usize = 128;
/// The release queue holds `1 << RELEASE_QUEUE_LOG2` releases (`Release` writes) until the CLOP
/// engine takes them; one written to a full queue is lost (`release_overflow`).
pub const RELEASE_QUEUE_LOG2: usize = 4;
pub const RELEASE_QUEUE_ENTRIES: usize = 1 << RELEASE_QUEUE_LOG2;
/// Number of address bits of the register bus (word addresses).
pub const ADDR_BITS: usize = 8;

/// Operations in bits 9:8 of [`RxReg::ClopCommand`].
pub const CLOP_OP_CONFIGURE: u32 = 1;
pub const CLOP_OP_DISABLE: u32 = 2;
/// Read-back bit of [`RxReg::ClopCommand`]: a command is pending or executing.
pub const CLOP_COMMAND_BUSY: u32 = 1;
/// Read-back bit of [`RxReg::ClopCommand`]: a command or staging write was refused since the last
/// accepted command (each counted in [`RxCounter::BadClopCommand`]): an operation other than
/// configure or disable; a configure whose staged count (1..=256), size (1..2^24) or page size
/// code is out of range; a configure of an enabled CLOP (disable it first: a configure frees every
/// buffer, and the host may hold some); a command or staging write while a command is pending
/// (ignored). Nothing changes for a refused command.
pub const CLOP_COMMAND_REFUSED: u32 = 1 << 1;
/// Bits of [`RxReg::ClopMode`].
pub const CLOP_MODE_HEADER: u32 = 1 << 0;
pub const CLOP_MODE_SKIP_HELD: u32 = 1 << 1;
/// Bit of [`RxReg::TlbCommand`]: the entry is valid (clear: invalidate the slot).
pub const TLB_COMMAND_VALID: u32 = 1 << 16;
/// Bit of [`RxReg::EventQueueSize`]: the ring is enabled (clear: events are discarded and
/// counted, and the tail index is held at 0).
pub const EVENT_QUEUE_ENABLE: u32 = 1 << 31;
/// Bit of [`RxReg::DmaControl`]: write requests up to 256 bytes (clear: 128).
pub const DMA_MPS_256: u32 = 1 << 0;

/// Page sizes of TLB entries and CLOPs (the code goes in bits 9:8 of [`RxReg::ClopTlb`] and
/// [`RxReg::TlbCommand`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PageSize {
    Page4K = 0,
    Page64K = 1,
    Page2M = 2,
}

impl PageSize {
    pub const fn bytes(self) -> u64 {
        match self {
            PageSize::Page4K => 4 << 10,
            PageSize::Page64K => 64 << 10,
            PageSize::Page2M => 2 << 20,
        }
    }
}

registers! {
    /// Registers of the receive engine.
    RxReg at 0; {
        /// Write: CLOP id in bits 5:0, operation (`CLOP_OP_*`) in bits 9:8. Read:
        /// `CLOP_COMMAND_BUSY`, `CLOP_COMMAND_REFUSED`.
        ClopCommand = 0x00, "clop_command";
        /// Staging: virtual base of the CLOP's buffers, bits 31:0 (page aligned: the bits below
        /// the CLOP's page size are ignored).
        ClopBaseLo = 0x01, "clop_base_lo";
        /// Staging: virtual base, bits 63:32.
        ClopBaseHi = 0x02, "clop_base_hi";
        /// Staging: bytes per buffer (1 to 2^24 - 1, else a configure is refused; a multiple of 16
        /// keeps the header layout's records 16-byte aligned in memory).
        ClopBufSize = 0x03, "clop_buf_size";
        /// Staging: buffers in the CLOP (1..=256, else a configure is refused).
        ClopBufCount = 0x04, "clop_buf_count";
        /// Staging: first TLB slot in bits 6:0, page size code in bits 9:8 (code 3 is refused).
        ClopTlb = 0x05, "clop_tlb";
        /// Staging: `CLOP_MODE_*` bits (layout and full policy).
        ClopMode = 0x06, "clop_mode";
        /// Staging: flush timeout in core cycles after a buffer's first packet (0: none).
        ClopTimeout = 0x07, "clop_timeout";
        /// Write: gives buffer bits 15:8 of CLOP bits 5:0 back to the card.
        Release = 0x08, "release";
        /// Staging: virtual page number (virtual address >> 12), bits 31:0.
        TlbVpnLo = 0x09, "tlb_vpn_lo";
        /// Staging: virtual page number, bits 51:32.
        TlbVpnHi = 0x0A, "tlb_vpn_hi";
        /// Staging: bus page number (bus address >> 12), bits 31:0.
        TlbPpnLo = 0x0B, "tlb_ppn_lo";
        /// Staging: bus page number, bits 51:32.
        TlbPpnHi = 0x0C, "tlb_ppn_hi";
        /// Write: slot bits 6:0, page size code bits 9:8, `TLB_COMMAND_VALID`; loads the slot.
        TlbCommand = 0x0D, "tlb_command";
        /// Bus address of the event ring, bits 31:0 (32-byte aligned, physically contiguous).
        EventQueueBaseLo = 0x10, "event_queue_base_lo";
        /// Bus address of the event ring, bits 63:32.
        EventQueueBaseHi = 0x11, "event_queue_base_hi";
        /// log2 of the ring's records in bits 3:0, `EVENT_QUEUE_ENABLE`.
        EventQueueSize = 0x12, "event_queue_size";
        /// The host's consumer index (records consumed, 16 bits, wrapping). While the ring is
        /// enabled a new head is taken only if it lies between the current head and the tail
        /// (else it is ignored and counted in `bad_event_head`); while disabled, any value.
        EventQueueHead = 0x13, "event_queue_head";
        /// Read-only: the card's producer index (records written, 16 bits, wrapping).
        EventQueueTail = 0x14, "event_queue_tail";
        /// Write: arms the interrupt. Read: bit 0, armed.
        IrqArm = 0x15, "irq_arm";
        /// Minimum core cycles between interrupts, and longest wait for `IrqCount` records.
        IrqMinInterval = 0x16, "irq_min_interval";
        /// Records that raise the interrupt at once (once `IrqMinInterval` allows it).
        IrqCount = 0x17, "irq_count";
        /// `DMA_MPS_256`.
        DmaControl = 0x18, "dma_control";
        /// Read-only: the core cycle counter the event timestamps use.
        Now = 0x19, "now";
    }
}

registers! {
    /// Counters of the receive engine (32 bits, wrapping), from word `0x40`.
    RxCounter at 0x40; {
        /// Packets written into a buffer and committed.
        Committed = 0x00, "committed";
        /// Payload bytes of the committed packets.
        CommittedBytes = 0x01, "committed_bytes";
        /// Packets for a CLOP that is not configured.
        DropNoClop = 0x02, "drop_no_clop";
        /// Packets larger than their CLOP's buffers.
        DropTooBig = 0x03, "drop_too_big";
        /// Packets dropped because the next buffer is held by the host.
        DropNoFreeBuffer = 0x04, "drop_no_free_buffer";
        /// Packets dropped because a page of their buffer has no valid TLB entry.
        DropTlbMiss = 0x05, "drop_tlb_miss";
        /// Packets that ended badly after their write started (discarded at commit).
        DropBadEnd = 0x06, "drop_bad_end";
        /// Releases of a buffer the host did not hold (ignored).
        BadRelease = 0x07, "bad_release";
        /// Releases lost because the release queue (`RELEASE_QUEUE_ENTRIES`, emptied one release per two
        /// cycles while the CLOP engine is free) was full: the last ones written; their buffers
        /// stay with the host until it releases them again.
        ReleaseOverflow = 0x08, "release_overflow";
        /// Event records written into the ring.
        EventsWritten = 0x09, "events_written";
        /// Events discarded while the event queue was disabled.
        EventsDropped = 0x0A, "events_dropped";
        /// Interrupts raised.
        Interrupts = 0x0B, "interrupts";
        /// CLOP commands and staging writes refused (see `CLOP_COMMAND_REFUSED`).
        BadClopCommand = 0x0C, "bad_clop_command";
        /// Event ring heads refused: beyond the tail, or behind the current head.
        BadEventHead = 0x0D, "bad_event_head";
        /// Releases the CLOP engine took from the release queue (applied, or ignored and counted in
        /// `bad_release`): the releases written minus this is the queue's fill, so a writer that
        /// keeps at most `RELEASE_QUEUE_ENTRIES` releases beyond it never overflows the queue (the
        /// host library does). Since contract 1.3.
        ReleasesTaken = 0x0E, "releases_taken";
    }
}

/// Most ports a card can have: port numbers are 2 bits and BAR0 has room for four port blocks
/// (stream keys are `port * 16 + Multi-Stream entry`). A card's own count, set when its Verilog
/// is generated, is its `card::CardReg::Ports` (the DE5-net build has 4).
pub const MAX_PORTS: usize = 4;
/// Multi-Stream entries per port.
pub const STREAMS_PER_PORT: usize = 16;
/// Depth of each port's clock-crossing FIFO, in 128-bit words (a packet is reserved whole: its
/// meta word and payload words).
pub const PORT_FIFO_WORDS: usize = 512;

registers! {
    /// Registers of one port's receive side, on the network-domain register bus (7-bit word
    /// addresses; the port is selected beside the address). Words `0x00..0x40` are the port's
    /// offload core ([`crate::Reg`], counters at `0x10 + i`).
    PortReg at 0; {
        /// Write: Multi-Stream entry `bits 19:16` becomes UDP port `bits 15:0`, valid if bit 31
        /// (`port::STREAM_VALID`; clear: the entry is removed).
        StreamTable = 0x40, "stream_table";
        /// Read: entry `e` of the Multi-Stream table is at word `stream_entry + e` (16 entries):
        /// valid in bit 31, UDP port in bits 15:0.
        StreamEntry = 0x50, "stream_entry";
        /// Counter: datagrams for a UDP port in no valid entry (dropped), good ones only: one
        /// that ends in error is counted by the offload core under its reason.
        DropNoStream = 0x60, "drop_no_stream";
        /// Counter: datagrams dropped because the port's FIFO into the core domain had no room.
        DropFifoFull = 0x61, "drop_fifo_full";
        /// Counter: datagrams passed into the core domain.
        Forwarded = 0x62, "forwarded";
        /// Packet generator. Write: `GEN_START` starts it (sequence and `gen_sent` from 0),
        /// `GEN_STOP` stops it after the datagram in progress. Read: `GEN_RUNNING`.
        GenControl = 0x68, "gen_control";
        /// Generator: destination IPv4 address (next hop resolved by ARP as for any datagram).
        GenDstIp = 0x69, "gen_dst_ip";
        /// Generator: source UDP port in bits 31:16, destination UDP port in bits 15:0.
        GenPorts = 0x6A, "gen_ports";
        /// Generator: payload bytes (`GEN_MIN_PAYLOAD` to `GEN_MAX_PAYLOAD`; smaller values send
        /// `GEN_MIN_PAYLOAD`, larger ones `GEN_MAX_PAYLOAD`).
        GenLen = 0x6B, "gen_len";
        /// Generator: datagrams to send (0: until stopped).
        GenCount = 0x6C, "gen_count";
        /// Generator: idle network cycles (6.4 ns) after each datagram's payload before the next
        /// request (0: back to back).
        GenGap = 0x6D, "gen_gap";
        /// Counter: datagrams the generator sent (cleared by `GEN_START`).
        GenSent = 0x6E, "gen_sent";
    }
}

/// Word addresses of [`PortReg`] as constants (the gateware's decoder uses them).
pub mod port {
    use super::PortReg;

    /// Word address of the offload core's first register.
    pub const OFFLOAD_CORE: u32 = 0x00;
    pub const STREAM_TABLE: u32 = PortReg::StreamTable.word();
    pub const STREAM_ENTRY: u32 = PortReg::StreamEntry.word();
    /// Bit of the table words: the entry is valid.
    pub const STREAM_VALID: u32 = 1 << 31;
    pub const DROP_NO_STREAM: u32 = PortReg::DropNoStream.word();
    pub const DROP_FIFO_FULL: u32 = PortReg::DropFifoFull.word();
    pub const FORWARDED: u32 = PortReg::Forwarded.word();
    pub const GEN_CONTROL: u32 = PortReg::GenControl.word();
    pub const GEN_SENT: u32 = PortReg::GenSent.word();
    /// [`PortReg::GenControl`] write bits and read bit.
    pub const GEN_START: u32 = 1 << 0;
    pub const GEN_STOP: u32 = 1 << 1;
    pub const GEN_RUNNING: u32 = 1 << 0;
    /// Payload sizes of the generator.
    pub const GEN_MIN_PAYLOAD: u32 = 16;
    pub const GEN_MAX_PAYLOAD: u32 = 1472;
}

/// The payload the packet generator sends (then byte `i` is `i % 256` up to the end).
pub const GEN_PAYLOAD_FIELDS: [Field; 3] = [
    Field {
        name: "sequence",
        offset: 0,
        bytes: 8,
        doc: "datagram number since the generator started, from 0 (little-endian)",
    },
    Field {
        name: "tx_time",
        offset: 8,
        bytes: 4,
        doc: "core cycle counter when the datagram was requested from UDP TX (little-endian)",
    },
    Field {
        name: "pattern",
        offset: 12,
        bytes: 4,
        doc: "bytes 12, 13, 14, 15: the pattern `i % 256` that fills the rest of the payload",
    },
];

/// The payload the generator sends as datagram `sequence`, requested at core cycle `tx_time`.
pub fn gen_payload(sequence: u64, tx_time: u32, len: usize) -> Vec<u8> {
    let mut p: Vec<u8> = (0..len).map(|i| i as u8).collect();
    p[..8].copy_from_slice(&sequence.to_le_bytes());
    p[8..12].copy_from_slice(&tx_time.to_le_bytes());
    p
}

/// Bytes of the per-packet header of the header layout ([`CLOP_MODE_HEADER`]).
pub const PACKET_HEADER_BYTES: usize = 16;

/// The fields of [`PacketHeader`].
pub const PACKET_HEADER_FIELDS: [Field; 6] = [
    Field {
        name: "len",
        offset: 0,
        bytes: 2,
        doc: "payload length",
    },
    Field {
        name: "src_port",
        offset: 2,
        bytes: 2,
        doc: "source UDP port",
    },
    Field {
        name: "src_ip",
        offset: 4,
        bytes: 4,
        doc: "source IPv4 address, network order (a.b.c.d is bytes a, b, c, d)",
    },
    Field {
        name: "sop_time",
        offset: 8,
        bytes: 4,
        doc: "core cycle counter at the frame's SOP at the MAC",
    },
    Field {
        name: "seq",
        offset: 12,
        bytes: 2,
        doc: "the packet's sequence number in its CLOP (wrapping)",
    },
    Field {
        name: "reserved",
        offset: 14,
        bytes: 2,
        doc: "zero",
    },
];

/// The per-packet header of the header layout: 16 bytes, then the payload, padded to the next
/// multiple of 16 bytes before the next packet's header.
///
/// | bytes | field |
/// | --- | --- |
/// | 0..1 | payload length (little-endian) |
/// | 2..3 | source UDP port (little-endian) |
/// | 4..7 | source IPv4 address (network order: `a.b.c.d` is bytes a, b, c, d) |
/// | 8..11 | core cycle counter at the frame's SOP at the MAC (little-endian) |
/// | 12..13 | the packet's sequence number in its CLOP (little-endian, wrapping) |
/// | 14..15 | zero |
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PacketHeader {
    pub len: u16,
    pub src_port: u16,
    pub src_ip: [u8; 4],
    pub sop_time: u32,
    pub seq: u16,
}

impl PacketHeader {
    pub fn encode(&self) -> [u8; PACKET_HEADER_BYTES] {
        let mut b = [0u8; PACKET_HEADER_BYTES];
        b[0..2].copy_from_slice(&self.len.to_le_bytes());
        b[2..4].copy_from_slice(&self.src_port.to_le_bytes());
        b[4..8].copy_from_slice(&self.src_ip);
        b[8..12].copy_from_slice(&self.sop_time.to_le_bytes());
        b[12..14].copy_from_slice(&self.seq.to_le_bytes());
        b
    }

    #[inline]
    pub fn decode(b: &[u8; PACKET_HEADER_BYTES]) -> Self {
        Self {
            len: u16::from_le_bytes([b[0], b[1]]),
            src_port: u16::from_le_bytes([b[2], b[3]]),
            src_ip: [b[4], b[5], b[6], b[7]],
            sop_time: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
            seq: u16::from_le_bytes([b[12], b[13]]),
        }
    }

    /// Bytes a packet of `len` payload bytes takes in a buffer of the header layout.
    pub const fn record_bytes(len: usize) -> usize {
        PACKET_HEADER_BYTES + len.div_ceil(16) * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_unique_and_in_range() {
        let mut words: Vec<u32> = RxReg::ALL.iter().map(|r| r.word()).collect();
        words.extend(RxCounter::ALL.iter().map(|c| c.word()));
        let n = words.len();
        words.sort();
        words.dedup();
        assert_eq!(words.len(), n);
        assert!(words.iter().all(|w| *w < 1 << ADDR_BITS));
    }

    #[test]
    fn packet_header_round_trips_and_records_are_16_aligned() {
        let h = PacketHeader {
            len: 1472,
            src_port: 0xBEEF,
            src_ip: [10, 0, 0, 2],
            sop_time: 0xDEAD_BEEF,
            seq: 7,
        };
        let b = h.encode();
        assert_eq!(&b[4..8], &[10, 0, 0, 2]);
        assert_eq!(&b[14..16], &[0, 0]);
        assert_eq!(PacketHeader::decode(&b), h);
        let mut end = 0;
        for (f, v) in
            PACKET_HEADER_FIELDS
                .iter()
                .zip([1472u32, 0xBEEF, 0x0200_000A, 0xDEAD_BEEF, 7, 0])
        {
            assert_eq!(f.offset, end);
            let mut le = [0u8; 4];
            le[..f.bytes].copy_from_slice(&b[f.offset..f.offset + f.bytes]);
            assert_eq!(u32::from_le_bytes(le), v, "{}", f.name);
            end += f.bytes;
        }
        assert_eq!(end, PACKET_HEADER_BYTES);
        assert_eq!(PacketHeader::record_bytes(1), 32);
        assert_eq!(PacketHeader::record_bytes(16), 32);
        assert_eq!(PacketHeader::record_bytes(17), 48);
    }
}

/// The register writes that program the receive engine, in the order the card needs them: the one
/// sequence both the host library and the simulator's host model send.
pub mod program {
    use super::{
        PageSize, RxReg, CLOP_MODE_HEADER, CLOP_MODE_SKIP_HELD, CLOP_OP_CONFIGURE, CLOP_OP_DISABLE,
        TLB_COMMAND_VALID,
    };

    /// One register write: the register and the value.
    pub type RxWrite = (RxReg, u32);

    /// TLB slot `slot` translates the page at virtual address `vaddr` to bus address `bus` (both
    /// page aligned, pages of `page`).
    pub fn tlb_entry(slot: u32, page: PageSize, vaddr: u64, bus: u64) -> [RxWrite; 5] {
        let (vpn, ppn) = (vaddr >> 12, bus >> 12);
        [
            (RxReg::TlbVpnLo, vpn as u32),
            (RxReg::TlbVpnHi, (vpn >> 32) as u32),
            (RxReg::TlbPpnLo, ppn as u32),
            (RxReg::TlbPpnHi, (ppn >> 32) as u32),
            (
                RxReg::TlbCommand,
                TLB_COMMAND_VALID | (page as u32) << 8 | slot,
            ),
        ]
    }

    /// TLB slot `slot` no longer translates.
    pub fn tlb_invalidate(slot: u32) -> RxWrite {
        (RxReg::TlbCommand, slot)
    }

    /// A CLOP's configuration (see the module doc of `rx`).
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub struct ClopProgram {
        pub id: u8,
        /// Virtual base of its buffers, as its TLB slots translate it.
        pub base: u64,
        pub buffer_bytes: u32,
        pub buffers: u32,
        pub first_slot: u8,
        pub page: PageSize,
        /// Per-packet headers (else raw payloads).
        pub header: bool,
        /// Skip held buffers (else drop while the next buffer is held).
        pub skip_held: bool,
        /// Flush timeout in core cycles after a buffer's first packet; 0: none.
        pub timeout: u32,
    }

    impl ClopProgram {
        /// The staging registers, then the configure command (done when `ClopCommand` reads
        /// back without `CLOP_COMMAND_BUSY`).
        pub fn configure(&self) -> [RxWrite; 8] {
            let mode = if self.header { CLOP_MODE_HEADER } else { 0 }
                | if self.skip_held {
                    CLOP_MODE_SKIP_HELD
                } else {
                    0
                };
            [
                (RxReg::ClopBaseLo, self.base as u32),
                (RxReg::ClopBaseHi, (self.base >> 32) as u32),
                (RxReg::ClopBufSize, self.buffer_bytes),
                (RxReg::ClopBufCount, self.buffers),
                (
                    RxReg::ClopTlb,
                    (self.page as u32) << 8 | self.first_slot as u32,
                ),
                (RxReg::ClopMode, mode),
                (RxReg::ClopTimeout, self.timeout),
                (RxReg::ClopCommand, CLOP_OP_CONFIGURE << 8 | self.id as u32),
            ]
        }
    }

    /// Stop CLOP `id` (done, and no write to its buffers can follow, when `ClopCommand` reads back
    /// without `CLOP_COMMAND_BUSY`).
    pub fn clop_disable(id: u8) -> RxWrite {
        (RxReg::ClopCommand, CLOP_OP_DISABLE << 8 | id as u32)
    }

    /// Give buffer `buffer` of CLOP `id` back to the card.
    pub fn release(id: u8, buffer: u16) -> RxWrite {
        (RxReg::Release, (buffer as u32) << 8 | id as u32)
    }
}
