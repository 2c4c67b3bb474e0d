//! The Si570 programmer (`nanet_hdl::board::si570`) with I2C bits of 8 cycles and 200 cycles to
//! settle, against the model of the part (`nanet_sim::world::si570`) on an open-drain bus: the
//! part ends at 644.53125 MHz within 0.01 ppm whatever its crystal (the datasheet's 2000 ppm
//! either way) and its factory dividers, through the datasheet's sequence (RECALL, read, freeze,
//! write, unfreeze, NewFreq; any other order is the model's violation), a slow RECALL polled
//! until it ends; a part that does not answer is tried `MAX_TRIES` times, then given up, `done`
//! never coming; dividers or a crystal that read back as nonsense give the nominal crystal's
//! registers (`fallback`). On the rust-hdl model and its Verilog in lockstep.

use nanet_hdl::board::si570::{de5net_sfp_refclk, program, I2cStep, Si570Init, MAX_TRIES};
use nanet_sim::design_ports;
use nanet_sim::engine::{DesignSim, EngineKind};
use nanet_sim::world::si570::{decode, divider_regs, Access, Si570};

#[derive(Clone, Default)]
pub struct SIn {
    reset: bool,
    start: bool,
    sda_in: bool,
}

#[derive(Clone, Default, Debug)]
pub struct SOut {
    done: bool,
    fallback: bool,
    failures: u8,
    gave_up: bool,
    scl_low: bool,
    sda_low: bool,
}

design_ports! {
    pub Si570Design for Si570Init<2, 200>, top "nanet_si570_init_test", inputs SIn, outputs SOut,
    clocks { clock }
    inputs { reset => reset, start => start, sda_in => sda_in, }
    outputs {
        done => done, fallback => fallback, failures => failures, gave_up => gave_up,
        scl_low => scl_low,
        sda_low => sda_low,
    }
}

/// Runs the programmer against `part` for at most `limit` cycles (until `done`).
fn run(part: &mut Si570, limit: u64) -> (SOut, u64) {
    let mut d = DesignSim::<Si570Design>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("mgmt", 0, 10_000);
    // 10 ms is 1000 bits at 100 kHz.
    part.cycles_10ms = 8000;
    d.inputs.reset = true;
    d.inputs.sda_in = true;
    d.tick(clk);
    d.inputs.reset = false;
    d.inputs.start = true;
    let mut pull = false;
    for cycle in 0..limit {
        let o = d.settle().clone();
        if o.done {
            return (o, cycle);
        }
        let sda = !(o.sda_low || pull);
        pull = part.tick(!o.scl_low, sda);
        d.inputs.sda_in = !(o.sda_low || pull);
        d.tick(clk);
    }
    (d.settle().clone(), limit)
}

#[test]
fn the_part_ends_at_644_53125_mhz_whatever_its_crystal_and_factory_dividers() {
    for (ppm, hs, n1) in [
        (0.0, 9, 6),
        (-1990.0, 5, 10),
        (1990.0, 7, 8),
        (-300.0, 4, 14),
    ] {
        let mut part = Si570::new(0, 114.285 * (1.0 + ppm * 1e-6), 100.0, hs, n1);
        let (o, cycles) = run(&mut part, 60_000);
        assert!(
            o.done,
            "{ppm} ppm, HS_DIV {hs} N1 {n1}: not done in {cycles} cycles"
        );
        assert!(part.violations.is_empty(), "{:?}", part.violations);
        assert!(!o.fallback && o.failures == 0, "{o:?}");
        let error = (part.output_mhz / 644.53125 - 1.0) * 1e6;
        assert!(
            error.abs() < 0.01,
            "{ppm} ppm: {} MHz ({error} ppm)",
            part.output_mhz
        );
        assert_eq!(
            decode(&part.dividers()).0,
            4,
            "HS_DIV 4 and N1 2: the only DCO in range"
        );
        assert_eq!(decode(&part.dividers()).1, 2);
        // The accesses in the datasheet's order: RECALL, read back, freeze, write, unfreeze,
        // NewFreq.
        let writes: Vec<u8> = part
            .accesses
            .iter()
            .filter_map(|a| match a {
                Access::Write(r, _) => Some(*r),
                _ => None,
            })
            .collect();
        assert_eq!(writes, [135, 137, 7, 8, 9, 10, 11, 12, 137, 135]);
    }
}

#[test]
fn a_part_that_does_not_answer_is_tried_again_and_never_done() {
    // The part answers at 0x55 only: the programmer's address (0) is not acknowledged.
    let mut part = Si570::new(0x55, 114.285, 100.0, 9, 6);
    let (o, _) = run(&mut part, 20_000);
    assert!(
        !o.done && o.gave_up && o.failures as u64 == MAX_TRIES,
        "{o:?}"
    );
    assert!(part.accesses.is_empty());
    assert!((part.output_mhz - 100.0).abs() < 1e-6);
}

#[test]
fn dividers_that_read_back_as_nonsense_give_the_nominal_crystals_registers() {
    let mut part = Si570::new(0, 114.285, 100.0, 9, 6);
    // HS_DIV code 4 is unused: what a read gone wrong could return.
    part.factory = [0x80, 0x02, 0, 0, 0, 0];
    let (o, _) = run(&mut part, 60_000);
    assert!(o.done && o.fallback, "{o:?}");
    let t = de5net_sfp_refclk();
    assert_eq!(part.dividers(), divider_regs(4, 2, t.rfreq_nominal));
    assert_eq!(part.dividers(), [0x00, 0x42, 0xD1, 0xE1, 0x27, 0xAF]);
    assert!((part.output_mhz - 644.53125).abs() < 1e-5);
}

#[test]
fn a_slow_recall_is_polled_until_it_ends() {
    let mut part = Si570::new(0, 114.285, 100.0, 9, 6);
    part.recall_cycles = 3000;
    let (o, _) = run(&mut part, 60_000);
    assert!(
        o.done && part.violations.is_empty(),
        "{o:?} {:?}",
        part.violations
    );
    let polls = part
        .accesses
        .iter()
        .filter(|a| matches!(a, Access::Read(135, _)))
        .count();
    assert!(polls > 1, "register 135 read {polls} times");
    assert!((part.output_mhz / 644.53125 - 1.0).abs() < 1e-8);
}

#[test]
fn a_crystal_far_outside_its_tolerance_gives_the_nominal_crystals_registers() {
    // 5% fast: legal dividers, but an RFREQ no part within 2000 ppm has.
    let mut part = Si570::new(0, 114.285 * 1.05, 100.0, 9, 6);
    let (o, _) = run(&mut part, 60_000);
    assert!(o.done && o.fallback, "{o:?}");
    assert_eq!(part.dividers(), [0x00, 0x42, 0xD1, 0xE1, 0x27, 0xAF]);
}

#[test]
fn the_program_follows_the_datasheets_large_change() {
    let p = program(0);
    use I2cStep::*;
    assert_eq!(
        p.steps[..7],
        [BusClear, Stop, Start, Write(0), Write(135), Write(1), Stop]
    );
    assert_eq!(p.steps[p.poll_end], Stop);
    assert_eq!(
        p.steps[p.read_end - 1],
        Read {
            into: 5,
            ack: false
        }
    );
    assert_eq!(p.steps[p.last - 1], Write(0x40));
    assert_eq!(p.error_stop, p.steps.len() - 1);
    let t = de5net_sfp_refclk();
    assert_eq!((t.hs_div, t.n1, t.num, t.shift), (4, 2, 825, 4));
    assert_eq!(t.rfreq_nominal, 0x2D1E127AF);
}
