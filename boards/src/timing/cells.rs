//! What each cell of yosys's Intel ALM library does for timing, with the Cyclone V delays of the
//! specify blocks in yosys's `techlibs/intel_alm/common/{alm,dff,mem}_sim.v` (the numbers
//! nextpnr-mistral uses too). yosys's final `blackbox` pass empties the cell models of the netlist
//! it writes, so the delays are copied here; `boards/tests/timing.rs` compares them with the
//! installed files.

/// How a cell's pins take part in timing.
#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    /// A register: launches `q` on `clock`'s edge after `clk_to_q` ps; `captures` are sampled on
    /// that edge.
    Register {
        clock: &'static str,
        q: &'static str,
        clk_to_q: u32,
        captures: &'static [&'static str],
    },
    /// Combinational arcs from input pins to output pins.
    Logic { arcs: &'static [Arc] },
    /// A memory: `captures` (write port, and the read address of a synchronous read) are sampled on
    /// `clock`; `launch` (a registered read port) starts a path; `arcs` (an asynchronous read)
    /// lead from the read address to the data. Its contents launch nothing: by the FIFO protocol
    /// the word read was written cycles before, so a memory is where a clock crossing may happen.
    Memory {
        clock: &'static str,
        captures: &'static [&'static str],
        launch: Option<(&'static str, u32)>,
        arcs: &'static [Arc],
    },
}

/// One combinational arc: `from` to `to` in `ps` picoseconds. `level` says whether it is a level
/// of logic: entering a LUT or a carry chain is one; travelling along the chain (`CI`) is not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arc {
    pub from: &'static str,
    pub to: &'static str,
    pub ps: u32,
    pub level: bool,
    /// A general routing connection leads into `from` (the carry chain is dedicated wiring).
    pub routed: bool,
}

const fn lut(from: &'static str, ps: u32) -> Arc {
    Arc {
        from,
        to: "Q",
        ps,
        level: true,
        routed: true,
    }
}

const fn arith(from: &'static str, to: &'static str, ps: u32) -> Arc {
    let carry = matches!(from.as_bytes(), b"CI");
    Arc {
        from,
        to,
        ps,
        level: !carry,
        routed: !carry,
    }
}

const fn mlab_read(from: &'static str, ps: u32) -> Arc {
    Arc {
        from,
        to: "B1DATA",
        ps,
        level: true,
        routed: true,
    }
}

const ALUT6: &[Arc] = &[
    lut("A", 605),
    lut("B", 583),
    lut("C", 510),
    lut("D", 512),
    lut("E", 400),
    lut("F", 97),
];
const ALUT5: &[Arc] = &[
    lut("A", 583),
    lut("B", 510),
    lut("C", 512),
    lut("D", 400),
    lut("E", 97),
];
const ALUT4: &[Arc] = &[lut("A", 510), lut("B", 512), lut("C", 400), lut("D", 97)];
const ALUT3: &[Arc] = &[lut("A", 510), lut("B", 400), lut("C", 97)];
const ALUT2: &[Arc] = &[lut("A", 400), lut("B", 97)];
const NOT: &[Arc] = &[lut("A", 97)];
const ARITH: &[Arc] = &[
    arith("A", "SO", 1342),
    arith("B", "SO", 1323),
    arith("C", "SO", 927),
    arith("D0", "SO", 887),
    arith("D1", "SO", 785),
    arith("CI", "SO", 368),
    arith("A", "CO", 1082),
    arith("B", "CO", 1062),
    arith("C", "CO", 813),
    arith("D0", "CO", 866),
    arith("D1", "CO", 1198),
    // The file halves the ALM's 71 ps: two ALUT_ARITH cells share an ALM.
    arith("CI", "CO", 36),
];
/// Per address bit; `B1ADDR` is a bus, so the arcs name its bits.
const MLAB_READ: &[Arc] = &[
    mlab_read("B1ADDR[0]", 487),
    mlab_read("B1ADDR[1]", 475),
    mlab_read("B1ADDR[2]", 382),
    mlab_read("B1ADDR[3]", 284),
    mlab_read("B1ADDR[4]", 96),
];

/// I/O buffers (when synthesized without `-noiopad`) only pass their signal on.
const IB: &[Arc] = &[Arc {
    from: "PAD",
    to: "O",
    ps: 0,
    level: false,
    routed: false,
}];
const OB: &[Arc] = &[Arc {
    from: "I",
    to: "PAD",
    ps: 0,
    level: false,
    routed: true,
}];

/// The flip-flop's clock-to-output delay (DATAIN path).
pub const FF_CLK_TO_Q: u32 = 731;
/// The M10K's registered read port, clock to data.
pub const M10K_CLK_TO_DATA: u32 = 1004;

/// The role of cell type `kind`, or `None` for a type the walk does not know.
pub fn role(kind: &str) -> Option<Role> {
    Some(match kind {
        "MISTRAL_FF" => Role::Register {
            clock: "CLK",
            q: "Q",
            clk_to_q: FF_CLK_TO_Q,
            // ACLR is asynchronous: its recovery time is checked like a setup time.
            captures: &["DATAIN", "ENA", "SCLR", "SLOAD", "SDATA", "ACLR"],
        },
        "MISTRAL_ALUT6" => Role::Logic { arcs: ALUT6 },
        "MISTRAL_ALUT5" => Role::Logic { arcs: ALUT5 },
        "MISTRAL_ALUT4" => Role::Logic { arcs: ALUT4 },
        "MISTRAL_ALUT3" => Role::Logic { arcs: ALUT3 },
        "MISTRAL_ALUT2" => Role::Logic { arcs: ALUT2 },
        "MISTRAL_NOT" => Role::Logic { arcs: NOT },
        "MISTRAL_ALUT_ARITH" => Role::Logic { arcs: ARITH },
        "MISTRAL_IB" => Role::Logic { arcs: IB },
        "MISTRAL_OB" => Role::Logic { arcs: OB },
        "MISTRAL_MLAB" => Role::Memory {
            clock: "CLK1",
            captures: &["A1ADDR", "A1DATA", "A1EN"],
            launch: None,
            arcs: MLAB_READ,
        },
        "MISTRAL_M10K" => Role::Memory {
            clock: "CLK1",
            captures: &["A1ADDR", "A1DATA", "A1EN", "B1ADDR", "B1EN"],
            launch: Some(("B1DATA", M10K_CLK_TO_DATA)),
            arcs: &[],
        },
        _ => return None,
    })
}

/// Every (cell, from, to, ps) arc of the table, for comparing with yosys's files.
pub fn table() -> Vec<(&'static str, &'static str, &'static str, u32)> {
    let mut t = vec![];
    for kind in [
        "MISTRAL_ALUT6",
        "MISTRAL_ALUT5",
        "MISTRAL_ALUT4",
        "MISTRAL_ALUT3",
        "MISTRAL_ALUT2",
        "MISTRAL_NOT",
        "MISTRAL_ALUT_ARITH",
        "MISTRAL_MLAB",
    ] {
        let arcs = match role(kind) {
            Some(Role::Logic { arcs }) | Some(Role::Memory { arcs, .. }) => arcs,
            _ => unreachable!(),
        };
        for a in arcs {
            t.push((kind, a.from, a.to, a.ps));
        }
    }
    t
}
