//! The PCIe root complex as the card's Hard IP sees it, at TLP level: host memory behind it (the
//! memory model of `host_mem.rs`, with its bandwidth, latency and registered regions, owned by
//! the host model and lent to each call), the host's register accesses to BAR0 as memory reads and
//! writes with their completions, and the card's MSI requests.
//!
//! Cycle by cycle, on the card's Avalon-ST boundary at its variant's width (`tlp.rs` for the
//! layout):
//! - receive side (to the card): the host's requests and the completions of the card's reads
//!   cross the link at its rate ([`MemoryPreset::link_bytes_per_cycle`]), each TLP with its
//!   header and framing, and the root port's DLLPs ahead of the TLPs not yet started; a TLP
//!   reaches the Hard IP's receive buffer once its last byte has crossed (its LCRC checked). [`RootComplex::drive_rx`] offers
//!   the next beat from that buffer only where the card's `rx_ready` was high
//!   [`RX_READY_LATENCY`] cycles earlier, and whenever it was (the Hard IP's ready latency, at
//!   its longest);
//! - transmit side (from the card): [`RootComplex::tx_ready`] says whether the link takes a beat
//!   (the memory model's credit; each beat is charged its payload, the first the header and
//!   framing), and [`RootComplex::take_tx`] collects the card's beats; each
//!   whole TLP is checked and carried out: memory writes go to host memory (refused and recorded
//!   outside every region, over the max payload size or across 4 KiB), completions answer the
//!   host's reads by tag, anything else is a violation;
//! - DLLPs ([`AckTimer`]): each side Acks the TLPs it received once per AckNak latency limit
//!   ([`MemoryPreset::ack_period_cycles`]) in which some arrived, with an UpdateFC per
//!   flow-control class with finite credits that received any: the root port's (for the card's
//!   TLPs and MSIs) go toward the card ahead of the TLPs not yet started, the card's Hard IP's
//!   (for the TLPs that crossed to it: UpdateFCs of posted and non-posted requests, completions
//!   having infinite credits at an endpoint) are charged to the link from the card. SKP ordered sets are not modelled (about 0.3% of either link);
//! - flow control ([`FlowControl`], `flow_control.rs`): the root port's receive buffers per TLP
//!   class, whose credit limits the card sees through the Hard IP ([`RootComplex::advertise_credits`]);
//!   a TLP sent without credits is a violation.
//!
//! Routing by ID: the root complex enumerated the card as [`RootComplex::card_id`] (the Hard IP
//! shows it on its configuration bus, `config_bus.rs`). Completions go to the requester ID of the
//! read, and the IOMMU translates a DMA write by its requester ID, so a read whose requester ID is
//! not the card's is never answered (its completions go to another device) and a write with
//! another ID faults and lands nowhere; both are violations, and so is a completion of the card
//! whose completer ID is not its own.
//!
//! PCIe ordering as the host sees it: a completion, and an MSI, do not pass the memory writes the
//! card sent before them, so both reach the host only once those writes are visible (one memory
//! latency after they were taken).
//!
//! The card's memory reads ([`ReadModel`]) are answered from host memory after the memory latency
//! plus a random delay per read, so reads complete out of order across tags; each read's data
//! comes in completions split at the read completion boundary (64 bytes), at random further
//! boundaries, and at the max payload size, in address order within the read. A read outside
//! every registered region gets an Unsupported Request completion and is recorded as a violation.
//! A test can make reads of chosen addresses fail on purpose (`ReadModel::failing`).

use std::collections::{HashSet, VecDeque};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::world::flow_control::{CreditLimits, FcClass, FlowControl};
#[cfg(doc)]
use crate::world::host_mem::MemoryPreset;
use crate::world::host_mem::{DmaWrite, MemoryPort};
use crate::world::tlp::{expected_empty, from_beats, length_dwords, Beat, CplStatus, Tlp};
use nanet_contract::pcie::PcieVariant;

/// How the root complex answers the card's memory reads.
pub struct ReadModel {
    /// Read completion boundary.
    pub rcb: u64,
    /// Probability of a split at each read completion boundary inside a completion.
    pub split: f64,
    /// Largest extra delay of a read beyond the memory latency, in cycles (uniform): reads issued
    /// closer than this complete out of order.
    pub jitter: u64,
    /// Host faults on purpose, for tests of the card's error paths: a read starting in
    /// `start..end` is answered with a completion of this status and no data, or (`None`) never
    /// answered (the card's completion timeout).
    pub failing: Vec<(u64, u64, Option<CplStatus>)>,
    rng: StdRng,
}

impl ReadModel {
    pub fn new(split: f64, jitter: u64, seed: u64) -> Self {
        Self {
            rcb: 64,
            split,
            jitter,
            failing: vec![],
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// In order, on time, split only where the max payload size forces it.
    pub fn plain() -> Self {
        Self::new(0.0, 0, 1)
    }
}

/// The host's requester ID.
pub const HOST_ID: u16 = 0x0000;

/// An MSI's header dword 0: a one-dword memory write with a 3-dword header (the x86 interrupt
/// address, `0xFEEx_xxxx`, is below 4 GiB).
const MSI_DW0: u32 = 0x4000_0001;

/// The cycles after the card's `rx_ready` falls in which the Hard IP may still send it a beat:
/// Intel's `_hw.tcl` declares `readyLatency 3` for `rx_st` (the user guide says 2; the model
/// takes the longer).
pub const RX_READY_LATENCY: usize = 3;

/// What a host read of a register got: the value, or the completion's status.
pub type ReadResult = Result<u32, CplStatus>;

/// A beat to the card, the BAR its TLP hits (one-hot) and whether it ends the last completion of
/// a card's read.
type BeatToCard = (Beat, u8, bool);

/// A TLP or the root port's DLLPs on the link toward the card: the link bytes, the TLP's beats
/// (0 for DLLPs) and its class when the card's Hard IP returns its credits in an UpdateFC.
struct OnLink {
    bytes: f64,
    beats: usize,
    update_fc: Option<FcClass>,
}

/// One side's Acks: the first TLP it receives after an Ack starts the AckNak latency limit;
/// when that runs out it sends one Ack DLLP, and an UpdateFC for each class with finite credits
/// that received TLPs (freeing credits as it takes them: the model's release delay is apart).
#[derive(Default)]
struct AckTimer {
    due: Option<u64>,
    /// Classes with finite credits that received TLPs since the last Ack (bit per [`FcClass`]).
    classes: u8,
}

impl AckTimer {
    fn received(&mut self, cycle: u64, period: Option<u64>, finite_class: Option<FcClass>) {
        let Some(period) = period else { return };
        self.due.get_or_insert(cycle + period);
        if let Some(c) = finite_class {
            self.classes |= 1 << c as u8;
        }
    }

    /// The DLLPs due by `cycle`, in number.
    fn take_due(&mut self, cycle: u64) -> u32 {
        if self.due.is_some_and(|d| d <= cycle) {
            let n = 1 + self.classes.count_ones();
            *self = Self::default();
            n
        } else {
            0
        }
    }
}

pub struct RootComplex {
    /// The link and the Avalon-ST width the card's Hard IP has.
    pub variant: PcieVariant,
    /// Where the card's BAR0 is on the bus.
    pub bar0: u64,
    /// The Hard IP's receive buffer: beats of TLPs that have crossed the link toward the card
    /// (the host's requests, the completions of the card's reads).
    rx_queue: VecDeque<BeatToCard>,
    /// The link toward the card, in order: TLPs and the root port's DLLPs ([`OnLink`]), the
    /// bytes of the front one across so far, and the beats of the TLPs on it.
    to_card_link: VecDeque<OnLink>,
    to_card_sent: f64,
    to_card_beats: VecDeque<BeatToCard>,
    /// The link's bytes per cycle and Ack period, from the memory preset at the last cycle's
    /// end (an unlimited link before the first), and that cycle.
    link_rate: f64,
    ack_period: Option<u64>,
    cycle: u64,
    /// The root port's Acks of the card's TLPs, and the card's Hard IP's of the TLPs that
    /// crossed to it.
    acks_to_card: AckTimer,
    acks_from_card: AckTimer,
    /// Link bytes that crossed toward the card (TLPs with headers and framing, DLLPs), and the
    /// DLLPs sent each way.
    pub link_bytes_to_card: u64,
    pub dllps_to_card: u64,
    pub dllps_from_card: u64,
    /// The card's ID on the bus (bus, device, function), as the root complex enumerated it.
    pub card_id: u16,
    /// The card's `rx_ready` one to [`RX_READY_LATENCY`] cycles ago.
    rx_ready_hist: [bool; RX_READY_LATENCY],
    /// `tx_ready` given in this cycle, one and two cycles ago.
    tx_ready_hist: [bool; 3],
    tx_partial: Vec<Beat>,
    /// Payload bytes of the TLP in progress not charged to the link yet.
    tx_payload_left: usize,
    next_tag: u8,
    /// Tags of the host reads waiting for their completion.
    pending_reads: HashSet<u8>,
    /// Completions and MSIs taken from the card, with the memory cycle they reach the host.
    in_order: VecDeque<(u64, Arrival)>,
    /// Completed host reads: (tag, value or the completion status).
    pub completions: VecDeque<(u8, ReadResult)>,
    /// MSIs that reached the host and were not yet taken.
    pub interrupts: u64,
    pub reads: ReadModel,
    /// Completions of the card's reads, with the memory cycle they are sent to the card.
    read_completions: Vec<(u64, Vec<Tlp>)>,
    /// Credit starvation: in every `.0` cycles, the first `.1` give the card no transmit credit
    /// (a link partner slow to return flow-control credits).
    pub starve: Option<(u64, u64)>,
    /// The root port's receive buffers and the credits it advertises. Set before the card leaves
    /// reset (as a link partner's buffers are fixed when the link comes up): limits only ever move
    /// forward, and the card counts from the first it sees.
    pub credits: FlowControl,
    /// The limits shown to the card in the previous cycle, to check they only moved forward.
    advertised: Option<CreditLimits>,
    /// The card's reads answered, and their bytes.
    pub card_reads: u64,
    pub card_read_bytes: u64,
    /// The card's reads taken and not yet answered in full (their last completion's last beat
    /// not yet handed to the card), and that count summed over every cycle: over a span of
    /// cycles, its growth divided by the span is the mean number of reads in flight at the root
    /// complex (with the reads answered, their mean round trip by Little's law).
    pub card_reads_open: u64,
    pub card_read_open_cycles: u64,
    /// The most reads in flight at once (never more than the card's tags), and the reads whose
    /// last completion beat went to the card (error completions included).
    pub card_reads_open_max: u64,
    pub card_reads_closed: u64,
    /// Beats handed to the card (its receive interface busy: one beat per cycle at most).
    pub beats_to_card: u64,
    /// What the card did wrong, in order.
    pub violations: Vec<String>,
}

enum Arrival {
    Completion(u8, ReadResult),
    Msi,
}

impl RootComplex {
    pub fn new(variant: PcieVariant, bar0: u64, card_id: u16) -> Self {
        Self {
            variant,
            bar0,
            card_id,
            rx_queue: VecDeque::new(),
            to_card_link: VecDeque::new(),
            to_card_sent: 0.0,
            to_card_beats: VecDeque::new(),
            link_rate: f64::INFINITY,
            ack_period: None,
            cycle: 0,
            acks_to_card: AckTimer::default(),
            acks_from_card: AckTimer::default(),
            link_bytes_to_card: 0,
            dllps_to_card: 0,
            dllps_from_card: 0,
            rx_ready_hist: [false; RX_READY_LATENCY],
            tx_ready_hist: [false; 3],
            tx_partial: vec![],
            tx_payload_left: 0,
            next_tag: 0,
            pending_reads: HashSet::new(),
            in_order: VecDeque::new(),
            completions: VecDeque::new(),
            interrupts: 0,
            reads: ReadModel::plain(),
            read_completions: vec![],
            starve: None,
            credits: FlowControl::root_port(),
            advertised: None,
            card_reads: 0,
            card_read_bytes: 0,
            card_reads_open: 0,
            card_read_open_cycles: 0,
            card_reads_open_max: 0,
            card_reads_closed: 0,
            beats_to_card: 0,
            violations: vec![],
        }
    }

    /// Queues a TLP of the host's to the card, hitting the BARs in `bar` (one-hot).
    pub fn queue(&mut self, t: &Tlp, bar: u8) {
        let beats = t.to_beats(self.variant);
        let dw0 = beats[0].dwords[0];
        let tlp = OnLink {
            bytes: self.tlp_link_bytes(dw0) as f64,
            beats: beats.len(),
            // (An endpoint's completion credits are infinite.)
            update_fc: FcClass::of(dw0)
                .map(|(c, _)| c)
                .filter(|c| *c != FcClass::Completion),
        };
        let beats = beats.into_iter().map(|b| (b, bar, false));
        if self.link_rate.is_infinite() && self.to_card_link.is_empty() {
            self.rx_queue.extend(beats);
            self.crossed(&tlp);
        } else {
            self.to_card_beats.extend(beats);
            self.to_card_link.push_back(tlp);
        }
    }

    /// What crossed the link toward the card: counted, and a TLP Acked by the card's Hard IP.
    fn crossed(&mut self, what: &OnLink) {
        self.link_bytes_to_card += what.bytes as u64;
        if what.beats > 0 {
            self.acks_from_card
                .received(self.cycle, self.ack_period, what.update_fc);
        }
    }

    /// Bytes a TLP takes on the link: its header, its payload, its framing.
    fn tlp_link_bytes(&self, dw0: u32) -> usize {
        let header = if dw0 & 1 << 29 != 0 { 16 } else { 12 };
        let payload = if dw0 & 1 << 30 != 0 {
            4 * length_dwords(dw0)
        } else {
            0
        };
        header + payload + self.variant.tlp_framing_bytes() as usize
    }

    /// Moves the link toward the card on by a cycle: the root port's DLLPs now due go ahead of
    /// the TLPs not yet started (the PCIe base specification's recommended priority: an Ack due
    /// by its timer before new TLPs), and the TLPs whose last byte crossed reach the Hard IP's
    /// buffer.
    fn advance_link_to_card(&mut self) {
        let dllps = self.acks_to_card.take_due(self.cycle);
        if dllps > 0 {
            self.dllps_to_card += dllps as u64;
            let started = (self.to_card_sent > 0.0) as usize;
            self.to_card_link.insert(
                started.min(self.to_card_link.len()),
                OnLink {
                    bytes: (dllps * self.variant.dllp_bytes()) as f64,
                    beats: 0,
                    update_fc: None,
                },
            );
        }
        if self.to_card_link.is_empty() {
            return;
        }
        self.to_card_sent += self.link_rate;
        while self
            .to_card_link
            .front()
            .is_some_and(|f| self.to_card_sent >= f.bytes)
        {
            let front = self.to_card_link.pop_front().unwrap();
            self.to_card_sent -= front.bytes;
            self.rx_queue
                .extend(self.to_card_beats.drain(..front.beats));
            self.crossed(&front);
        }
        if self.to_card_link.is_empty() {
            // An idle link banks nothing.
            self.to_card_sent = 0.0;
        }
    }

    /// Queues a host write of one register (dword) at BAR0 offset `offset`.
    pub fn bar0_write(&mut self, offset: u64, value: u32) {
        let t = Tlp::MemWrite {
            requester: HOST_ID,
            tag: 0,
            addr: self.bar0 + offset,
            first_be: 0xF,
            last_be: 0,
            data: vec![value],
        };
        self.queue(&t, 1);
    }

    /// Queues a host read of one register at BAR0 offset `offset`; returns its tag (the answer
    /// arrives in [`RootComplex::completions`]).
    pub fn bar0_read(&mut self, offset: u64) -> u8 {
        let tag = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        let t = Tlp::MemRead {
            requester: HOST_ID,
            tag,
            addr: self.bar0 + offset,
            len_dw: 1,
            first_be: 0xF,
            last_be: 0,
        };
        self.queue(&t, 1);
        self.pending_reads.insert(tag);
        tag
    }

    /// Waits for the completion of a read the caller queued itself (with [`RootComplex::queue`]).
    pub fn expect_read(&mut self, tag: u8) {
        self.pending_reads.insert(tag);
    }

    /// Host requests (and completions) not yet handed to the card, in beats: on the link and in
    /// the Hard IP's buffer.
    pub fn rx_backlog(&self) -> usize {
        self.rx_queue.len() + self.to_card_beats.len()
    }

    /// Host reads not yet answered.
    pub fn reads_pending(&self) -> usize {
        self.pending_reads.len()
    }

    /// The beat (and BAR hit) to present to the card in this cycle, given its `rx_ready` in this
    /// cycle; a beat is offered only where `rx_ready` was high [`RX_READY_LATENCY`] cycles
    /// earlier, and it moves.
    pub fn drive_rx(&mut self, card_rx_ready: bool) -> Option<(Beat, u8)> {
        let beat = if self.rx_ready_hist[RX_READY_LATENCY - 1] {
            self.rx_queue.pop_front()
        } else {
            None
        };
        self.rx_ready_hist.rotate_right(1);
        self.rx_ready_hist[0] = card_rx_ready;
        let (beat, bar, ends_read) = beat?;
        self.beats_to_card += 1;
        if ends_read {
            self.card_reads_open -= 1;
            self.card_reads_closed += 1;
        }
        Some((beat, bar))
    }

    /// Whether the link takes a beat from the card two cycles from now (the value for the card's
    /// `tx_ready` in this cycle). Called once per cycle, before [`RootComplex::take_tx`].
    pub fn tx_ready(&mut self, mem: &mut MemoryPort) -> bool {
        let starved = self
            .starve
            .is_some_and(|(every, length)| mem.cycle % every < length);
        let r = mem.ready() && !starved;
        self.tx_ready_hist = [r, self.tx_ready_hist[0], self.tx_ready_hist[1]];
        r
    }

    /// The card's transmit beat of this cycle, if it sent one: allowed where `tx_ready` was high
    /// two cycles earlier.
    pub fn take_tx(&mut self, beat: Option<Beat>, mem: &mut MemoryPort) {
        let Some(b) = beat else {
            if !self.tx_partial.is_empty() && self.tx_ready_hist[2] {
                self.violations
                    .push("a gap inside a TLP on a ready cycle".to_string());
            }
            return;
        };
        if !self.tx_ready_hist[2] {
            self.violations
                .push("a beat without tx_ready two cycles earlier".to_string());
        }
        if b.sop != self.tx_partial.is_empty() {
            self.violations.push(format!(
                "sop {} inside or outside a TLP",
                if b.sop { "set" } else { "missing" }
            ));
        }
        // The link's cost of the beat: the header (with framing, sequence number and LCRC) at the
        // first beat, then up to a beat of payload bytes per beat (payload riding in the header
        // beat is counted in the next ones: the total is right).
        if b.sop {
            let dw0 = b.dwords[0];
            if let Some((class, data)) = FcClass::of(dw0) {
                if let Err(e) = self.credits.receive(class, data, mem.cycle) {
                    self.violations.push(e);
                }
            }
            self.tx_payload_left = if dw0 & 1 << 30 != 0 {
                4 * length_dwords(dw0)
            } else {
                0
            };
            let header = if dw0 & 1 << 29 != 0 { 16 } else { 12 };
            mem.charge_link(header + self.variant.tlp_framing_bytes() as usize);
        } else {
            let n = self.tx_payload_left.min(self.variant.beat_bytes());
            self.tx_payload_left -= n;
            mem.charge_link(n);
        }
        self.tx_partial.push(b);
        if b.eop {
            let beats = std::mem::take(&mut self.tx_partial);
            let (h, d) = from_beats(&beats, self.variant);
            let empty = expected_empty(&h, self.variant);
            if b.empty != empty {
                self.violations.push(format!(
                    "a TLP of {} beats ended with empty {} where its length makes it {empty}",
                    beats.len(),
                    b.empty
                ));
            }
            self.carry_out(Tlp::decode(&h, &d), mem);
        }
    }

    /// The credit limits the Hard IP shows the card in this cycle. A limit that moved backwards
    /// since the last cycle (a test replacing the link partner's buffers after the card left
    /// reset) is a violation: no link does that, and a card counting credits available from the
    /// limits' advances would take it as a huge advance.
    pub fn advertise_credits(&mut self) -> CreditLimits {
        let now = self.credits.limits();
        if let Some(before) = self.advertised {
            for class in 0..3 {
                let hdr = now.hdr[class].wrapping_sub(before.hdr[class]);
                let data = now.data[class].wrapping_sub(before.data[class]) & 0xFFF;
                if hdr >= 0x80 || data >= 0x800 {
                    self.violations.push(format!(
                        "the link partner's credit limits of class {class} moved backwards \
                         ({} -> {} headers, {} -> {} data): set RootComplex::credits before the \
                         card leaves reset",
                        before.hdr[class], now.hdr[class], before.data[class], now.data[class]
                    ));
                }
            }
        }
        self.advertised = Some(now);
        now
    }

    /// Whether the Hard IP may send an MSI now (a one-dword posted write): room for it. The card
    /// asks only when every posted TLP it started has reached the Hard IP, and starts none until
    /// the MSI's credits are counted, so nothing else of it can need that room.
    pub fn msi_credit(&self) -> bool {
        self.credits.has_room(FcClass::Posted, 1, 1)
    }

    /// The card's MSI request was acknowledged in this cycle: the Hard IP sends it as a posted
    /// write (its credits consumed, its bytes charged to the link), and the interrupt reaches
    /// the host behind the writes sent before it.
    pub fn msi(&mut self, mem: &mut MemoryPort) {
        if let Err(e) = self.credits.receive(FcClass::Posted, 1, mem.cycle) {
            self.violations.push(format!("MSI: {e}"));
        }
        mem.charge_link_bytes(self.tlp_link_bytes(MSI_DW0));
        let update_fc = Some(FcClass::Posted).filter(|c| self.credits.is_finite(*c));
        self.acks_to_card
            .received(mem.cycle, mem.preset.ack_period_cycles, update_fc);
        self.in_order.push_back((Self::due(mem), Arrival::Msi));
    }

    fn due(mem: &MemoryPort) -> u64 {
        mem.cycle + mem.preset.latency_cycles + 1
    }

    /// A whole TLP from the card, taken outside the Hard IP's beat interface (module tests).
    pub fn take_tlp(&mut self, t: Tlp, mem: &mut MemoryPort) {
        self.carry_out(t, mem);
    }

    fn carry_out(&mut self, t: Tlp, mem: &mut MemoryPort) {
        // The root port Acks it, with an UpdateFC if its class has finite credits.
        let class = match &t {
            Tlp::MemWrite { .. } => Some(FcClass::Posted),
            Tlp::MemRead { .. } => Some(FcClass::NonPosted),
            Tlp::Completion { .. } => Some(FcClass::Completion),
            Tlp::Other { header, .. } => header
                .first()
                .and_then(|dw0| FcClass::of(*dw0))
                .map(|(c, _)| c),
        }
        .filter(|c| self.credits.is_finite(*c));
        self.acks_to_card
            .received(mem.cycle, mem.preset.ack_period_cycles, class);
        match &t {
            Tlp::MemWrite { requester, .. } if *requester != self.card_id => {
                self.violations.push(format!(
                    "a memory write with requester ID {requester:#06x}, not the card's {:#06x}: \
                     the IOMMU faults it",
                    self.card_id
                ));
            }
            Tlp::Completion { completer, .. } if *completer != self.card_id => {
                self.violations.push(format!(
                    "a completion with completer ID {completer:#06x}, not the card's {:#06x}",
                    self.card_id
                ));
            }
            Tlp::MemRead { requester, .. } if *requester != self.card_id => {
                self.violations.push(format!(
                    "a memory read with requester ID {requester:#06x}, not the card's {:#06x}: \
                     its completions go to another device",
                    self.card_id
                ));
            }
            Tlp::MemWrite { .. } => {
                let (addr, data, strobes) = t.write_strobes().expect("a memory write");
                mem.accept_write(DmaWrite {
                    addr,
                    data,
                    strobes,
                });
            }
            Tlp::Completion {
                tag, status, data, ..
            } => {
                if self.pending_reads.remove(tag) {
                    let r = match (status, data.first()) {
                        (CplStatus::Success, Some(v)) => Ok(*v),
                        (s, _) => Err(*s),
                    };
                    self.in_order
                        .push_back((Self::due(mem), Arrival::Completion(*tag, r)));
                } else {
                    self.violations.push(format!(
                        "a completion for tag {tag}, which no read is waiting for"
                    ));
                }
            }
            Tlp::MemRead {
                requester,
                tag,
                addr,
                len_dw,
                first_be,
                last_be,
            } => {
                let cpls =
                    self.answer_read(mem, *requester, *tag, *addr, *len_dw, *first_be, *last_be);
                // (A read answered with nothing, the card's completion timeout on purpose, is
                // never in flight here.)
                self.card_reads_open += !cpls.is_empty() as u64;
                self.card_reads_open_max = self.card_reads_open_max.max(self.card_reads_open);
                let extra = self.reads.rng.gen_range(0..=self.reads.jitter);
                self.read_completions.push((Self::due(mem) + extra, cpls));
            }
            other => self
                .violations
                .push(format!("a TLP the root complex does not take: {other:?}")),
        }
    }

    /// The completions of a card's read: the bytes its byte enables select, split as
    /// [`ReadModel`] says.
    #[allow(clippy::too_many_arguments)]
    fn answer_read(
        &mut self,
        mem: &MemoryPort,
        requester: u16,
        tag: u8,
        addr: u64,
        len_dw: u16,
        first_be: u8,
        last_be: u8,
    ) -> Vec<Tlp> {
        let len_dw = if len_dw == 0 { 1024 } else { len_dw as u64 };
        let last = if len_dw == 1 { first_be } else { last_be };
        // First and last enabled byte (PCIe byte enables of a read are contiguous).
        let skip = first_be.trailing_zeros().min(4) as u64;
        let cut = if last == 0 {
            4
        } else {
            4 - (8 - last.leading_zeros() as u64).min(4)
        };
        let start = (addr & !3) + skip;
        let bytes = (len_dw * 4).saturating_sub(skip + cut).max(1);
        let completion = |status, byte_count: u64, lower: u64, data: Vec<u32>| Tlp::Completion {
            completer: HOST_ID,
            status,
            byte_count: (byte_count & 0xFFF) as u16,
            requester,
            tag,
            lower_addr: (lower & 0x7F) as u8,
            data,
        };
        let failing = self
            .reads
            .failing
            .iter()
            .find(|f| (f.0..f.1).contains(&start));
        if let Some(&(_, _, status)) = failing {
            return status.map_or(vec![], |s| vec![completion(s, bytes, start, vec![])]);
        }
        if !mem.memory.readable(start, bytes) {
            self.violations.push(format!(
                "a read of {bytes} bytes at {start:#x}, outside every registered region"
            ));
            return vec![completion(CplStatus::Unsupported, bytes, start, vec![])];
        }
        self.card_reads += 1;
        self.card_read_bytes += bytes;
        // Dword-aligned span of the read, cut into completions at RCB boundaries.
        let end = start + bytes;
        let mut out = vec![];
        let mut at = start;
        while at < end {
            // End at an RCB boundary (or the read's end), within the max payload size.
            let rcb = self.reads.rcb;
            let limit = (at & !3) + mem.preset.max_payload.min(4096);
            let mut next = (((at / rcb) + 1) * rcb).min(end);
            while next < end {
                let further = (next + rcb).min(end);
                if further > limit || self.reads.rng.gen_bool(self.reads.split) {
                    break;
                }
                next = further;
            }
            let first = at & !3;
            let words = (next - first).div_ceil(4);
            let raw = mem.memory.read(first, (words * 4) as usize);
            let data = raw
                .chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            out.push(completion(CplStatus::Success, end - at, at, data));
            at = next;
        }
        out
    }

    /// Ends a cycle (after the memory model's tick): delivers what is due, moves the link toward
    /// the card on, and charges the card's DLLPs to the link from it.
    pub fn end_cycle(&mut self, mem: &mut MemoryPort) {
        self.cycle = mem.cycle;
        self.link_rate = mem.preset.link_bytes_per_cycle;
        self.ack_period = mem.preset.ack_period_cycles;
        self.credits.tick(mem.cycle);
        let dllps = self.acks_from_card.take_due(mem.cycle);
        if dllps > 0 {
            self.dllps_from_card += dllps as u64;
            mem.charge_link_bytes((dllps * self.variant.dllp_bytes()) as usize);
        }
        self.card_read_open_cycles += self.card_reads_open;
        let mut i = 0;
        while i < self.read_completions.len() {
            if self.read_completions[i].0 <= mem.cycle {
                let (_, cpls) = self.read_completions.remove(i);
                for c in &cpls {
                    self.queue(c, 0);
                }
                // (On the link if any TLP is: a TLP goes straight to the buffer only past an
                // empty link.)
                let last_beat = if self.to_card_beats.is_empty() {
                    self.rx_queue.back_mut()
                } else {
                    self.to_card_beats.back_mut()
                };
                if let Some(last) = last_beat.filter(|_| !cpls.is_empty()) {
                    last.2 = true;
                }
            } else {
                i += 1;
            }
        }
        self.advance_link_to_card();
        while self
            .in_order
            .front()
            .is_some_and(|(due, _)| *due <= mem.cycle)
        {
            match self.in_order.pop_front().unwrap().1 {
                Arrival::Completion(tag, r) => self.completions.push_back((tag, r)),
                Arrival::Msi => self.interrupts += 1,
            }
        }
    }

    /// The answer to read `tag`, once it has arrived.
    pub fn take_completion(&mut self, tag: u8) -> Option<ReadResult> {
        let i = self.completions.iter().position(|(t, _)| *t == tag)?;
        self.completions.remove(i).map(|(_, r)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::host_mem::MemoryPreset;

    fn rc() -> (RootComplex, MemoryPort) {
        let mut m = MemoryPort::new(MemoryPreset::ideal(), 0.0, 1);
        m.memory
            .register(0x1_0000_0000, 0x10000, "buffers")
            .unwrap();
        (
            RootComplex::new(PcieVariant::Gen2x8, 0xF7A0_0000, 0x0300),
            m,
        )
    }

    fn end(rc: &mut RootComplex, m: &mut MemoryPort) {
        m.tick();
        rc.end_cycle(m);
    }

    /// Runs the link for two cycles, as a running link would have, so beats may go at once.
    fn warm(rc: &mut RootComplex, m: &mut MemoryPort) {
        for _ in 0..3 {
            rc.tx_ready(m);
            end(rc, m);
        }
    }

    /// Feeds a TLP from the card, beat by beat, with the link always ready.
    fn send(rc: &mut RootComplex, m: &mut MemoryPort, t: &Tlp) {
        for b in t.to_beats(rc.variant) {
            rc.tx_ready(m);
            rc.take_tx(Some(b), m);
            end(rc, m);
        }
        for _ in 0..4 {
            rc.tx_ready(m);
            rc.take_tx(None, m);
            end(rc, m);
        }
    }

    #[test]
    fn card_writes_land_in_host_memory_byte_exact() {
        let (mut rc, mut m) = rc();
        warm(&mut rc, &mut m);
        let t = Tlp::MemWrite {
            requester: 0x0300,
            tag: 0,
            addr: 0x1_0000_0104,
            first_be: 0xC,
            last_be: 0x3,
            data: vec![0x4433_2211, 0x8877_6655, 0xCCBB_AA99],
        };
        send(&mut rc, &mut m, &t);
        assert!(rc.violations.is_empty(), "{:?}", rc.violations);
        m.assert_clean();
        assert_eq!(
            m.memory.read(0x1_0000_0104, 12),
            [0, 0, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0, 0]
        );
    }

    #[test]
    fn a_write_outside_the_regions_is_refused_and_a_stray_completion_reported() {
        let (mut rc, mut m) = rc();
        warm(&mut rc, &mut m);
        let t = Tlp::MemWrite {
            requester: 0x0300,
            tag: 0,
            addr: 0x2_0000_0000,
            first_be: 0xF,
            last_be: 0,
            data: vec![1],
        };
        send(&mut rc, &mut m, &t);
        assert_eq!(m.violations.len(), 1);
        let cpl = Tlp::Completion {
            completer: 0x0300,
            status: CplStatus::Success,
            byte_count: 4,
            requester: HOST_ID,
            tag: 9,
            lower_addr: 0,
            data: vec![5],
        };
        send(&mut rc, &mut m, &cpl);
        assert!(rc.violations[0].contains("tag 9"), "{:?}", rc.violations);
    }

    /// At either width, a TLP whose last beat's `empty` is not what its length makes it is a
    /// violation (the Hard IP would send a wrong TLP), and the right one is not.
    #[test]
    fn a_wrong_empty_on_the_last_beat_is_a_violation_at_either_width() {
        for v in PcieVariant::ALL {
            let (mut rc, mut m) = rc();
            rc.variant = v;
            warm(&mut rc, &mut m);
            let t = Tlp::MemWrite {
                requester: 0x0300,
                tag: 0,
                addr: 0x1_0000_0008,
                first_be: 0xF,
                last_be: 0xF,
                data: vec![1, 2, 3],
            };
            send(&mut rc, &mut m, &t);
            assert!(rc.violations.is_empty(), "{v}: {:?}", rc.violations);
            let mut beats = t.to_beats(v);
            beats.last_mut().unwrap().empty ^= 1;
            for b in beats {
                rc.tx_ready(&mut m);
                rc.take_tx(Some(b), &mut m);
                end(&mut rc, &mut m);
            }
            assert!(
                rc.violations.iter().any(|e| e.contains("empty")),
                "{v}: {:?}",
                rc.violations
            );
        }
    }

    #[test]
    fn the_cards_tlps_under_another_id_are_refused() {
        let (mut rc, mut m) = rc();
        warm(&mut rc, &mut m);
        let write = Tlp::MemWrite {
            requester: 0x0000,
            tag: 0,
            addr: 0x1_0000_0000,
            first_be: 0xF,
            last_be: 0,
            data: vec![0xDEAD_BEEF],
        };
        send(&mut rc, &mut m, &write);
        let read = Tlp::MemRead {
            requester: 0x0008,
            tag: 3,
            addr: 0x1_0000_0000,
            len_dw: 1,
            first_be: 0xF,
            last_be: 0,
        };
        send(&mut rc, &mut m, &read);
        for _ in 0..100 {
            end(&mut rc, &mut m);
        }
        assert_eq!(
            m.memory.read(0x1_0000_0000, 4),
            [0; 4],
            "the IOMMU faulted it"
        );
        assert!(rc.read_completions.is_empty() && rc.card_reads == 0);
        assert_eq!(rc.violations.len(), 2, "{:?}", rc.violations);
        assert!(rc.violations[0].contains("write with requester ID 0x0000"));
        assert!(rc.violations[1].contains("read with requester ID 0x0008"));
    }

    #[test]
    fn host_reads_go_out_under_the_ready_latency_and_complete_by_tag() {
        let (mut rc, mut m) = rc();
        let tag = rc.bar0_read(0x1004);
        rc.bar0_write(0x2000, 7);
        let mut ready = [false; RX_READY_LATENCY];
        let mut beats = vec![];
        for cycle in 0..40 {
            let r = cycle % 4 != 0;
            if let Some((b, bar)) = rc.drive_rx(r) {
                assert!(
                    ready[RX_READY_LATENCY - 1],
                    "beat without rx_ready {RX_READY_LATENCY} cycles earlier"
                );
                assert_eq!(bar, 1);
                beats.push(b);
            }
            ready.rotate_right(1);
            ready[0] = r;
        }
        assert_eq!(rc.rx_backlog(), 0);
        let (h, d) = from_beats(&beats[..1], rc.variant);
        assert!(matches!(
            Tlp::decode(&h, &d),
            Tlp::MemRead { addr: 0xF7A0_1004, tag: t, .. } if t == tag
        ));
        warm(&mut rc, &mut m);
        let cpl = Tlp::Completion {
            completer: 0x0300,
            status: CplStatus::Success,
            byte_count: 4,
            requester: HOST_ID,
            tag,
            lower_addr: 4,
            data: vec![0xABCD],
        };
        send(&mut rc, &mut m, &cpl);
        assert_eq!(rc.completions.pop_front(), Some((tag, Ok(0xABCD))));
        assert!(rc.violations.is_empty(), "{:?}", rc.violations);
    }

    #[test]
    fn card_reads_split_at_completion_boundaries_and_cover_the_bytes() {
        let (mut rc, mut m) = rc();
        rc.reads = ReadModel::new(0.5, 0, 9);
        let bytes: Vec<u8> = (0..4096).map(|i| (i * 7 + 3) as u8).collect();
        m.memory
            .write(0x1_0000_0000, &bytes, &vec![true; 4096])
            .unwrap();
        for (off, len) in [(5u64, 300u64), (64, 256), (1000, 3), (4000, 96)] {
            let addr = 0x1_0000_0000 + off;
            let first = addr & !3;
            let end = addr + len;
            let len_dw = (end - first).div_ceil(4);
            let first_be = (0xFu8 << (addr & 3)) & 0xF;
            let last_be = 0xFu8 >> ((4 - end % 4) % 4);
            let (first_be, last_be) = if len_dw == 1 {
                (first_be & last_be, 0)
            } else {
                (first_be, last_be)
            };
            let cpls = rc.answer_read(&m, 0x0300, 1, addr, len_dw as u16, first_be, last_be);
            let mut at = addr;
            let mut got = vec![];
            for c in &cpls {
                let Tlp::Completion {
                    byte_count,
                    lower_addr,
                    data,
                    status,
                    ..
                } = c
                else {
                    panic!("{c:?}")
                };
                assert_eq!(*status, CplStatus::Success);
                assert_eq!(*byte_count as u64, end - at, "remaining bytes");
                assert_eq!(*lower_addr as u64, at & 0x7F);
                assert!(data.len() * 4 <= 256, "over the max payload size");
                let stop = ((at & !3) + 4 * data.len() as u64).min(end);
                assert!(
                    stop == end || stop % 64 == 0,
                    "split off a boundary at {stop:#x}"
                );
                let raw: Vec<u8> = data.iter().flat_map(|d| d.to_le_bytes()).collect();
                got.extend_from_slice(&raw[(at & 3) as usize..(stop - (at & !3)) as usize]);
                at = stop;
            }
            assert_eq!(got, bytes[off as usize..(off + len) as usize]);
        }
        assert!(rc.violations.is_empty());
    }

    /// A 64-byte write of the card's into host memory.
    fn card_write() -> Tlp {
        Tlp::MemWrite {
            requester: 0x0300,
            tag: 0,
            addr: 0x1_0000_0000,
            first_be: 0xF,
            last_be: 0xF,
            data: vec![1; 16],
        }
    }

    /// A card's read of 256 bytes, answered split at every 64-byte boundary: four completions.
    fn send_read_in_four_completions(rc: &mut RootComplex, m: &mut MemoryPort) {
        rc.reads = ReadModel::new(1.0, 0, 3);
        warm(rc, m);
        let read = Tlp::MemRead {
            requester: 0x0300,
            tag: 4,
            addr: 0x1_0000_0000,
            len_dw: 64,
            first_be: 0xF,
            last_be: 0xF,
        };
        send(rc, m, &read);
    }

    /// A card's read is in flight from the root complex taking it until the last beat of its
    /// last completion goes to the card, and the in-flight count summed per cycle says so.
    #[test]
    fn a_card_read_is_in_flight_until_its_last_completion_beat_goes_to_the_card() {
        let (mut rc, mut m) = rc();
        send_read_in_four_completions(&mut rc, &mut m);
        assert_eq!(rc.card_reads_open, 1);
        // Memory without latency: the completions wait for the card already.
        let expected_beats = rc.rx_backlog();
        assert_eq!(
            expected_beats,
            4 * 5,
            "four 64-byte completions of 5 beats at 128 bits"
        );
        let (open0, beats0) = (rc.card_read_open_cycles, rc.beats_to_card);
        let mut cycles_open = 0;
        let mut last_beat_cycle = None;
        // The card takes a beat every other cycle.
        for cycle in 0..200u64 {
            let was_open = rc.card_reads_open;
            if rc.drive_rx(cycle % 2 == 0).is_some() && rc.card_reads_open == 0 && was_open == 1 {
                last_beat_cycle = Some(cycle);
            }
            cycles_open += rc.card_reads_open;
            end(&mut rc, &mut m);
        }
        assert_eq!((rc.card_reads_open, rc.card_reads_open_max), (0, 1));
        assert_eq!(rc.card_reads_closed, 1);
        assert_eq!(rc.beats_to_card - beats0, expected_beats as u64);
        let last = last_beat_cycle.expect("the read's last beat went to the card");
        assert!(rc.rx_backlog() == 0, "nothing after the last beat");
        assert_eq!(rc.card_read_open_cycles - open0, cycles_open);
        assert_eq!(
            cycles_open, last,
            "open from the start up to the last beat's cycle"
        );
        assert!(rc.violations.is_empty(), "{:?}", rc.violations);
    }

    fn rc_on(preset: MemoryPreset) -> (RootComplex, MemoryPort) {
        let (rc, _) = rc();
        let mut m = MemoryPort::new(preset, 0.0, 1);
        m.memory
            .register(0x1_0000_0000, 0x10000, "buffers")
            .unwrap();
        (rc, m)
    }

    /// On a Gen2 x8 link a read's completions reach the card at the link's 16 bytes per cycle,
    /// each with its 12-byte header and 8 bytes of framing, and each only once its last byte
    /// has crossed: the first of four 64-byte completions (84 bytes on the link) in the sixth
    /// cycle the link carries it, the last in the 21st (336 bytes), its 5 beats then; on an
    /// unlimited link the 20 beats would follow the answer back to back.
    #[test]
    fn completions_cross_the_link_toward_the_card_at_its_rate_with_headers_and_framing() {
        let (mut rc, mut m) = rc_on(MemoryPreset::gen2_x8());
        send_read_in_four_completions(&mut rc, &mut m);
        // The cycle after the completions went onto the link.
        let mut answered = None;
        let (mut first, mut last, mut beats) = (None, None, 0);
        for _ in 0..400u64 {
            let cycle = m.cycle;
            if rc.read_completions.is_empty() {
                answered.get_or_insert(cycle);
            }
            if rc.drive_rx(true).is_some() {
                beats += 1;
                first.get_or_insert(cycle);
                last = Some(cycle);
            }
            end(&mut rc, &mut m);
        }
        assert_eq!(beats, 20);
        let answered = answered.unwrap();
        let (first, last) = (first.unwrap() - answered, last.unwrap() - answered);
        assert!(
            first == 5 && last == 20 + 4,
            "the first beat {first} and the last {last} cycles after the answer"
        );
        let tlp_bytes = 4 * (12 + 64 + 8);
        assert!(rc.link_bytes_to_card >= tlp_bytes);
        assert_eq!(rc.card_reads_open, 0);
        assert!(rc.violations.is_empty(), "{:?}", rc.violations);
    }

    /// Each side Acks what it received once per AckNak latency limit (79 cycles at Gen2 x8) in
    /// which something came, with an UpdateFC for each finite class that received TLPs: the
    /// card's writes (posted) make the root port send an Ack and an UpdateFC toward the card;
    /// the host's register writes make the card's Hard IP send the same, charged to the link
    /// from the card. No TLPs, no DLLPs.
    #[test]
    fn each_side_acks_and_returns_credits_once_per_ack_period_with_tlps() {
        let (mut rc, mut m) = rc_on(MemoryPreset::gen2_x8());
        let period = m.preset.ack_period_cycles.unwrap();
        assert_eq!(period, 79);
        warm(&mut rc, &mut m);
        for _ in 0..3 * period {
            end(&mut rc, &mut m);
        }
        assert_eq!(
            (rc.dllps_to_card, rc.dllps_from_card),
            (0, 0),
            "an idle link"
        );
        let write = card_write();
        // Writes from the card for two and a half periods: the first Ack is due a period after
        // the first write, the next a period after the first write following it.
        let start = m.cycle;
        while m.cycle < start + 5 * period / 2 {
            rc.take_tlp(write.clone(), &mut m);
            for _ in 0..8 {
                end(&mut rc, &mut m);
            }
        }
        for _ in 0..2 * period {
            end(&mut rc, &mut m);
        }
        assert_eq!(
            rc.dllps_to_card,
            3 * 2,
            "three Acks, each with a posted UpdateFC"
        );
        assert_eq!(rc.dllps_from_card, 0, "the card received nothing");
        // The host writes a register: the card's Hard IP Acks it a period later.
        rc.bar0_write(0x2000, 7);
        for _ in 0..2 * period {
            rc.drive_rx(true);
            end(&mut rc, &mut m);
        }
        assert_eq!(rc.rx_backlog(), 0);
        assert_eq!(rc.dllps_from_card, 2, "an Ack and a posted UpdateFC");
        assert!(rc.violations.is_empty(), "{:?}", rc.violations);
    }

    /// The card's MSI is a posted write on the link like any other: its 24 bytes charged to the
    /// link from the card, and the root port Acks it a period later, with a posted UpdateFC.
    #[test]
    fn the_root_port_acks_the_cards_msi() {
        let (mut rc, mut m) = rc_on(MemoryPreset::gen2_x8());
        let period = m.preset.ack_period_cycles.unwrap();
        warm(&mut rc, &mut m);
        assert!(rc.msi_credit());
        let before = m.link_bytes_from_card;
        rc.msi(&mut m);
        assert_eq!(
            m.link_bytes_from_card - before,
            12 + 4 + 8,
            "a 3-dword header, a dword of data, Gen2 framing"
        );
        for _ in 0..period - 1 {
            end(&mut rc, &mut m);
        }
        assert_eq!(rc.dllps_to_card, 0, "not before the Ack period ends");
        for _ in 0..period {
            end(&mut rc, &mut m);
        }
        assert_eq!(rc.dllps_to_card, 2, "an Ack and a posted UpdateFC");
        assert!(rc.violations.is_empty(), "{:?}", rc.violations);
    }

    /// The root port's DLLPs, due while a TLP crosses toward the card, go right behind it and
    /// ahead of the TLPs not yet started (an Ack due by its timer before new TLPs).
    #[test]
    fn the_root_ports_dllps_go_ahead_of_the_tlps_not_yet_started() {
        let (mut rc, mut m) = rc_on(MemoryPreset::gen2_x8());
        let period = m.preset.ack_period_cycles.unwrap();
        warm(&mut rc, &mut m);
        rc.take_tlp(card_write(), &mut m);
        for _ in 0..period - 5 {
            end(&mut rc, &mut m);
        }
        // Three host writes of 256 bytes (280 bytes on the link, 17.5 cycles each).
        for i in 0..3 {
            let host_write = Tlp::MemWrite {
                requester: HOST_ID,
                tag: 0,
                addr: rc.bar0 + 0x400 * i,
                first_be: 0xF,
                last_be: 0xF,
                data: vec![7; 64],
            };
            rc.queue(&host_write, 1);
        }
        while rc.dllps_to_card == 0 {
            end(&mut rc, &mut m);
        }
        assert_eq!(rc.dllps_to_card, 2, "an Ack and a posted UpdateFC");
        let order: Vec<usize> = rc.to_card_link.iter().map(|t| t.beats).collect();
        assert!(rc.to_card_sent > 0.0, "the first write is crossing");
        assert_eq!(order.len(), 4, "{order:?}");
        assert!(
            order[0] > 0 && order[1] == 0 && order[2] > 0 && order[3] > 0,
            "the DLLPs behind the TLP crossing, ahead of the other two: {order:?}"
        );
    }

    /// On the ideal link (functional tests) nothing is paced and no DLLP is sent.
    #[test]
    fn the_ideal_link_sends_no_dllps_and_hands_requests_over_at_once() {
        let (mut rc, mut m) = rc();
        rc.bar0_write(0x2000, 7);
        assert!(
            rc.to_card_link.is_empty() && rc.to_card_beats.is_empty() && rc.rx_backlog() > 0,
            "in the Hard IP's buffer at once"
        );
        for _ in 0..400 {
            rc.drive_rx(true);
            end(&mut rc, &mut m);
        }
        assert_eq!((rc.dllps_to_card, rc.dllps_from_card), (0, 0));
    }
}
