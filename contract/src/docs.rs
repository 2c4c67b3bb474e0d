//! Generated artifacts of the contract: `docs/regmap.md` (the register map for people) and
//! `host/include/nanet_regs.h` (the same for C). `make docs` writes them; the contract's tests fail
//! when the committed copies are stale.

use std::fmt::Write;

use crate::bar0;
use crate::card::{self, CardReg};
use crate::events::{EventKind, Field, EVENT_BYTES, EVENT_FIELDS};
use crate::offload::ArpRead;
use crate::regdef::{doc_line, RegInfo};
use crate::rx::{
    self, PortReg, RxCounter, RxReg, GEN_PAYLOAD_FIELDS, PACKET_HEADER_BYTES, PACKET_HEADER_FIELDS,
};
use crate::tx::{self, TxReg, TX_DESC_FIELDS};
use crate::{offload, Counter, DropReason, Reg};

/// Repository paths of the generated files.
pub const REGMAP_MD: &str = "docs/regmap.md";
pub const C_HEADER: &str = "host/include/nanet_regs.h";

/// A register block of BAR0: title, C prefix, BAR0 offset, registers.
struct Block {
    title: &'static str,
    prefix: &'static str,
    base: u64,
    regs: Vec<RegInfo>,
}

fn counter_info(c: Counter) -> RegInfo {
    let mut info = c.info();
    if info.doc.is_empty() {
        // The drop counters are documented by their reason.
        if let Some(r) = c.drop_reason() {
            info.doc = r.doc();
        }
    }
    info
}

fn blocks() -> Vec<Block> {
    let mut rx_regs: Vec<RegInfo> = RxReg::ALL.iter().map(|r| r.info()).collect();
    rx_regs.extend(RxCounter::ALL.iter().map(|c| c.info()));
    let mut port_regs: Vec<RegInfo> = Reg::ALL.iter().map(|r| r.info()).collect();
    port_regs.extend(Counter::ALL.iter().map(|c| counter_info(*c)));
    port_regs.extend(ArpRead::ALL.iter().map(|r| r.info()));
    port_regs.extend(PortReg::ALL.iter().map(|r| r.info()));
    vec![
        Block {
            title: "Card block (identification, card-wide counters; block table from word 0x10)",
            prefix: "NANET_CARD_",
            base: 0,
            regs: CardReg::ALL.iter().map(|r| r.info()).collect(),
        },
        Block {
            title: "Receive engine (CLOPs, TLB, DMA, event queue, interrupt)",
            prefix: "NANET_RX_",
            base: bar0::RX_ENGINE,
            regs: rx_regs,
        },
        Block {
            title: "Transmit ring r, sending from port r (at `0x1800 + r * 0x100`)",
            prefix: "NANET_TX_",
            base: bar0::TX_ENGINE,
            regs: TxReg::ALL.iter().map(|r| r.info()).collect(),
        },
        Block {
            title: "Port p: offload core, counters and Multi-Stream (at `0x2000 + p * 0x1000`)",
            prefix: "NANET_PORT_",
            base: bar0::port(0, 0),
            regs: port_regs,
        },
    ]
}

/// Named constants for C, with their values.
fn constants() -> Vec<(&'static str, u64)> {
    vec![
        ("BAR0_BYTES", bar0::BAR0_BYTES),
        ("CARD_MAGIC_VALUE", card::CARD_MAGIC as u64),
        ("CONTRACT_MAJOR", card::CONTRACT_MAJOR as u64),
        ("CONTRACT_MINOR", card::CONTRACT_MINOR as u64),
        ("BLOCK_TABLE", card::BLOCK_TABLE as u64),
        ("BLOCK_CARD", card::BlockKind::Card as u64),
        ("BLOCK_RX_ENGINE", card::BlockKind::RxEngine as u64),
        ("BLOCK_PORT", card::BlockKind::Port as u64),
        ("BLOCK_TX_ENGINE", card::BlockKind::TxEngine as u64),
        ("TX_ENGINE", bar0::TX_ENGINE),
        ("TX_RING_STRIDE", bar0::TX_RING_STRIDE),
        ("TX_DESC_BYTES", tx::TX_DESC_BYTES as u64),
        ("TX_DESC_EVENT", tx::TX_DESC_EVENT as u64),
        ("TX_RING_ENABLE", tx::TX_RING_ENABLE as u64),
        ("TX_RING_MIN_LOG2", tx::TX_RING_MIN_LOG2 as u64),
        ("TX_RING_MAX_LOG2", tx::TX_RING_MAX_LOG2 as u64),
        ("TX_MAX_PAYLOAD", tx::TX_MAX_PAYLOAD as u64),
        ("RX_ENGINE", bar0::RX_ENGINE),
        ("PORT0", bar0::PORT0),
        ("PORT_STRIDE", bar0::PORT_STRIDE),
        ("MAX_PORTS", rx::MAX_PORTS as u64),
        ("STREAMS_PER_PORT", rx::STREAMS_PER_PORT as u64),
        ("CLOPS", rx::CLOPS as u64),
        ("MAX_BUFFERS", rx::MAX_BUFFERS as u64),
        ("MAX_BUFFER_BYTES", rx::MAX_BUFFER_BYTES as u64),
        ("TLB_ENTRIES", rx::TLB_ENTRIES as u64),
        ("CLOP_OP_CONFIGURE", rx::CLOP_OP_CONFIGURE as u64),
        ("CLOP_OP_DISABLE", rx::CLOP_OP_DISABLE as u64),
        ("CLOP_COMMAND_BUSY", rx::CLOP_COMMAND_BUSY as u64),
        ("CLOP_COMMAND_REFUSED", rx::CLOP_COMMAND_REFUSED as u64),
        ("CLOP_MODE_HEADER", rx::CLOP_MODE_HEADER as u64),
        ("CLOP_MODE_SKIP_HELD", rx::CLOP_MODE_SKIP_HELD as u64),
        ("TLB_COMMAND_VALID", rx::TLB_COMMAND_VALID as u64),
        ("EVENT_QUEUE_ENABLE", rx::EVENT_QUEUE_ENABLE as u64),
        ("DMA_MPS_256", rx::DMA_MPS_256 as u64),
        ("STREAM_VALID", rx::port::STREAM_VALID as u64),
        ("GEN_START", rx::port::GEN_START as u64),
        ("GEN_STOP", rx::port::GEN_STOP as u64),
        ("GEN_RUNNING", rx::port::GEN_RUNNING as u64),
        ("GEN_MIN_PAYLOAD", rx::port::GEN_MIN_PAYLOAD as u64),
        ("GEN_MAX_PAYLOAD", rx::port::GEN_MAX_PAYLOAD as u64),
        ("PAGE_4K", rx::PageSize::Page4K as u64),
        ("PAGE_64K", rx::PageSize::Page64K as u64),
        ("PAGE_2M", rx::PageSize::Page2M as u64),
        ("OFFLOAD_ID_VALUE", offload::ID_VALUE as u64),
        ("ARP_COMMAND_FLUSH", offload::ARP_COMMAND_FLUSH as u64),
        (
            "ARP_COMMAND_ADD_STATIC",
            offload::ARP_COMMAND_ADD_STATIC as u64,
        ),
        ("ARP_READ_DONE", offload::ARP_READ_DONE as u64),
        ("ARP_READ_VALID", offload::ARP_READ_VALID as u64),
        ("STATUS_ARP_FLUSHING", offload::STATUS_ARP_FLUSHING as u64),
        (
            "CONTROL_UDP_TX_CHECKSUM",
            offload::CONTROL_UDP_TX_CHECKSUM as u64,
        ),
        ("OFFLOAD_VERSION_VALUE", offload::VERSION_VALUE as u64),
        ("EVENT_BYTES", EVENT_BYTES as u64),
        ("PACKET_HEADER_BYTES", PACKET_HEADER_BYTES as u64),
    ]
}

fn field_table(out: &mut String, fields: &[Field]) {
    out.push_str("| bytes | field | meaning |\n| --- | --- | --- |\n");
    for f in fields {
        let end = f.offset + f.bytes - 1;
        let range = if end == f.offset {
            format!("{}", f.offset)
        } else {
            format!("{}..{}", f.offset, end)
        };
        let _ = writeln!(out, "| {range} | `{}` | {} |", f.name, f.doc);
    }
}

/// `docs/regmap.md`.
pub fn regmap_markdown() -> String {
    let mut out = String::new();
    out.push_str(
        "# nanet register map\n\n\
         Generated from the `nanet-contract` crate by `make docs`; do not edit (a test fails when \
         this file is stale).\n\n\
         Every register is 32 bits wide and is accessed as one aligned 32-bit word of BAR0 \
         (64 KiB). 64-bit values are split into `*_lo` (bits 31:0) and `*_hi` (bits 63:32). \
         Counters wrap and are cleared by reset only.\n\n\
         | BAR0 bytes | block |\n| --- | --- |\n\
         | `0x0000..0x0100` | card block: identification, counters, block table |\n\
         | `0x1000..0x1400` | receive engine |\n\
         | `0x1800..0x1900` | transmit engine |\n\
         | `0x2000 + p * 0x1000` | port `p`, 0..4 |\n",
    );
    for b in blocks() {
        let _ = write!(
            out,
            "\n## {}\n\n| BAR0 offset | word | name | description |\n| --- | --- | --- | --- |\n",
            b.title
        );
        for r in &b.regs {
            let _ = writeln!(
                out,
                "| `{:#06x}` | `{:#04x}` | `{}` | {} |",
                b.base + 4 * r.word as u64,
                r.word,
                r.name,
                r.doc_line().replace('|', "\\|")
            );
        }
    }
    out.push_str("\n## Constants\n\n| name | value |\n| --- | --- |\n");
    for (name, v) in constants() {
        let _ = writeln!(out, "| `{name}` | `{v:#x}` |");
    }
    out.push_str("\n## Event record (32 bytes, little-endian)\n\n");
    field_table(&mut out, &EVENT_FIELDS);
    out.push_str("\n| kind | code | meaning |\n| --- | --- | --- |\n");
    for k in EventKind::ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            k.name().to_uppercase(),
            k as u8,
            k.doc()
        );
    }
    out.push_str(
        "\n## Per-packet header of the header layout (16 bytes, little-endian; the payload \
         follows, padded to 16 bytes)\n\n",
    );
    field_table(&mut out, &PACKET_HEADER_FIELDS);
    out.push_str("\n## Transmit descriptor (32 bytes, little-endian)\n\n");
    field_table(&mut out, &TX_DESC_FIELDS);
    out.push_str("\n## Payload of the packet generator\n\n");
    field_table(&mut out, &GEN_PAYLOAD_FIELDS);
    out.push_str("\n## Drop reasons of the offload core\n\n| counter | reason |\n| --- | --- |\n");
    for r in DropReason::ALL {
        let _ = writeln!(out, "| `{}` | {} |", r.name(), doc_line(r.doc()));
    }
    out
}

fn c_type(bytes: usize) -> &'static str {
    match bytes {
        1 => "uint8_t",
        2 => "uint16_t",
        4 => "uint32_t",
        _ => "uint64_t",
    }
}

fn c_struct(out: &mut String, name: &str, fields: &[Field], bytes: usize) {
    let _ = writeln!(out, "struct {name} {{");
    for f in fields {
        if f.name.ends_with("_ip") || ![1, 2, 4, 8].contains(&f.bytes) {
            let _ = writeln!(out, "    uint8_t {}[{}]; /* {} */", f.name, f.bytes, f.doc);
        } else {
            let _ = writeln!(out, "    {} {}; /* {} */", c_type(f.bytes), f.name, f.doc);
        }
    }
    let _ = writeln!(out, "}};");
    let _ = writeln!(
        out,
        "_Static_assert(sizeof(struct {name}) == {bytes}, \"{name} layout\");\n"
    );
}

/// `host/include/nanet_regs.h`.
pub fn c_header() -> String {
    let mut out = String::new();
    out.push_str(
        "/* nanet register map and record layouts.\n \
         * Generated from the nanet-contract crate by `make docs`; do not edit. */\n\
         #ifndef NANET_REGS_H\n#define NANET_REGS_H\n\n#include <stdint.h>\n\n",
    );
    for (name, v) in constants() {
        let _ = writeln!(out, "#define NANET_{name} {v:#x}u");
    }
    out.push_str("#define NANET_PORT_BASE(p) (NANET_PORT0 + (p) * NANET_PORT_STRIDE)\n");
    for b in blocks() {
        let _ = writeln!(
            out,
            "\n/* {}: byte offsets inside the block */",
            b.title.replace('`', "")
        );
        for r in &b.regs {
            let _ = writeln!(
                out,
                "#define {}{} {:#05x}u",
                b.prefix,
                r.name.to_uppercase(),
                4 * r.word
            );
        }
    }
    out.push_str("\n/* Event kinds (bits 3:0 of kind_phase; bit 7 is the phase) */\n");
    for k in EventKind::ALL {
        let _ = writeln!(
            out,
            "#define NANET_EVENT_{} {}u",
            k.name().to_uppercase(),
            k as u8
        );
    }
    out.push_str("#define NANET_EVENT_PHASE 0x80u\n\n");
    c_struct(&mut out, "nanet_event_record", &EVENT_FIELDS, EVENT_BYTES);
    c_struct(
        &mut out,
        "nanet_packet_header",
        &PACKET_HEADER_FIELDS,
        PACKET_HEADER_BYTES,
    );
    c_struct(
        &mut out,
        "nanet_tx_descriptor",
        &TX_DESC_FIELDS,
        tx::TX_DESC_BYTES,
    );
    out.push_str("#endif /* NANET_REGS_H */\n");
    out
}
