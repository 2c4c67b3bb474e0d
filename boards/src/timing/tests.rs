//! The walk on small hand-made netlists, each built to show one rule.

use serde_json::{json, Value};

use super::graph::Graph;
use super::*;

/// A netlist builder: nets are numbered from 2 (yosys's convention: 0 and 1 are constants).
#[derive(Default)]
struct Net {
    cells: serde_json::Map<String, Value>,
    ports: serde_json::Map<String, Value>,
    names: serde_json::Map<String, Value>,
}

impl Net {
    fn cell(&mut self, kind: &str, conns: Value) -> &mut Self {
        let name = format!("c{}", self.cells.len());
        self.cells
            .insert(name, json!({"type": kind, "connections": conns}));
        self
    }
    fn ff(&mut self, clk: u32, d: u32, q: u32, name: &str) -> &mut Self {
        self.name(name, q);
        self.cell(
            "MISTRAL_FF",
            json!({"CLK": [clk], "DATAIN": [d], "Q": [q], "ENA": ["1"]}),
        )
    }
    fn lut2(&mut self, a: u32, b: u32, q: u32) -> &mut Self {
        self.cell("MISTRAL_ALUT2", json!({"A": [a], "B": [b], "Q": [q]}))
    }
    fn port(&mut self, name: &str, dir: &str, net: u32) -> &mut Self {
        self.ports
            .insert(name.into(), json!({"direction": dir, "bits": [net]}));
        self.name(name, net)
    }
    fn name(&mut self, name: &str, net: u32) -> &mut Self {
        self.names
            .insert(name.into(), json!({"hide_name": 0, "bits": [net]}));
        self
    }
    fn graph(&self) -> Result<Graph> {
        let j = json!({"modules": {"t": {"attributes": {"top": "1"}, "ports": self.ports,
            "cells": self.cells, "netnames": self.names}}});
        Graph::from_json(&j.to_string(), None)
    }
    fn report(&self) -> Report {
        let clocks = [
            ClockBudget::new("fast", 250.0, 2),
            ClockBudget::new("slow", 100.0, 8),
        ];
        analyze(&self.graph().unwrap(), &clocks, 600).unwrap()
    }
}

fn group(r: &Report, kind: PathKind) -> &Group {
    r.groups
        .iter()
        .find(|g| g.kind == kind)
        .unwrap_or_else(|| panic!("no group {kind:?} in {r:#?}"))
}

fn within(c: &str) -> PathKind {
    PathKind::Within(c.into())
}

/// Clock nets: 2 = fast, 3 = slow.
fn clocked() -> Net {
    let mut n = Net::default();
    n.port("fast", "input", 2).port("slow", "input", 3);
    n
}

#[test]
fn a_lut_is_a_level_and_the_delay_adds_cells_and_routing() {
    let mut n = clocked();
    // r0 -> LUT2(A) -> LUT2(B) -> r1, all on fast.
    n.ff(2, 12, 10, "r0").lut2(10, 10, 11).lut2(10, 11, 12);
    n.ff(2, 13, 13, "r1");
    let r = n.report();
    let g = group(&r, within("fast"));
    assert_eq!(g.max_levels, 2);
    // Two endpoints: r0 (two levels: via the second LUT) and r1 (zero: its own output).
    assert_eq!(g.endpoints, 2);
    assert!(g.passes());
    // Slowest: clk->Q 731, route 600 + A 400 into the first LUT, route 600 + B 97 into the
    // second, route 600 into the register = 3028 ps.
    assert_eq!(g.worst_ps, 731 + 600 + 400 + 600 + 97 + 600);
    let names: Vec<&str> = g.deepest_path.iter().map(|s| s.net.as_str()).collect();
    assert_eq!(names, ["r0", "net 11", "net 12"]);
    assert_eq!(g.deepest_path.last().unwrap().levels, 2);
}

#[test]
fn three_levels_exceed_a_budget_of_two() {
    let mut n = clocked();
    n.ff(2, 13, 10, "r0")
        .lut2(10, 10, 11)
        .lut2(11, 11, 12)
        .lut2(12, 12, 13);
    let r = n.report();
    let g = group(&r, within("fast"));
    assert_eq!((g.max_levels, g.over_budget), (3, 1));
    assert!(!r.passes());
    assert_eq!(g.blocks, vec![("(top)".to_string(), 1, 3)]);
    assert!(r.text(true).contains("deepest path, 3 levels"));
    assert_eq!(r.json()["domains"]["fast"]["max_levels"], 3);
    assert_eq!(r.json()["domains"]["fast"]["endpoints_over_budget"], 1);
}

#[test]
fn a_carry_chain_is_one_level_where_it_is_entered() {
    let mut n = clocked();
    // Four arithmetic cells chained through CI/CO: a 4-bit add of r0 and r1.
    n.ff(2, 30, 10, "r0");
    n.ff(2, 31, 11, "r1");
    let mut ci: Value = json!("0");
    for bit in 0..4u32 {
        n.cell(
            "MISTRAL_ALUT_ARITH",
            json!({"A": [10], "B": [11], "CI": [ci], "SO": [20 + bit], "CO": [40 + bit]}),
        );
        ci = json!(40 + bit);
    }
    n.ff(2, 23, 30, "sum3");
    n.ff(2, 43, 31, "carry");
    let r = n.report();
    let g = group(&r, within("fast"));
    assert_eq!(g.max_levels, 1, "{g:#?}");
    // The top sum bit: A->CO of the first cell, two CI->CO steps and CI->SO, no routing between.
    assert_eq!(g.worst_ps, 731 + 600 + 1082 + 2 * 36 + 368 + 600);
}

#[test]
fn a_crossing_must_go_register_to_register() {
    let mut n = clocked();
    // fast r0 -> slow s0 directly: allowed; fast r0 -> LUT -> slow s1: logic on a crossing.
    n.ff(2, 10, 10, "r0");
    n.ff(3, 10, 20, "s0");
    n.lut2(10, 10, 11).ff(3, 11, 21, "s1");
    let r = n.report();
    let g = group(
        &r,
        PathKind::Crossing {
            from: "fast".into(),
            to: "slow".into(),
        },
    );
    assert_eq!((g.endpoints, g.over_budget, g.max_levels), (2, 1, 1));
    assert!(!r.passes());
}

#[test]
fn a_fifo_memory_read_belongs_to_the_reading_clock() {
    let mut n = clocked();
    // An MLAB written on fast, read asynchronously at an address held on slow, into a slow
    // register: a slow path of one level, and no crossing.
    n.ff(2, 10, 10, "wdata");
    n.ff(3, 20, 20, "raddr");
    n.cell(
        "MISTRAL_MLAB",
        json!({"CLK1": [2], "A1DATA": [10], "A1ADDR": [10, 10, 10, 10, 10], "A1EN": ["1"],
               "B1ADDR": [20, "0", "0", "0", "0"], "B1DATA": [21]}),
    );
    n.ff(3, 21, 22, "rdata");
    let r = n.report();
    assert!(r
        .groups
        .iter()
        .all(|g| !matches!(g.kind, PathKind::Crossing { .. })));
    let g = group(&r, within("slow"));
    assert_eq!(g.max_levels, 1);
    // Address bit 0 is the MLAB's slowest input.
    assert_eq!(g.worst_ps, 731 + 600 + 487 + 600);
    assert!(r.passes(), "{}", r.text(true));
}

#[test]
fn ports_have_their_own_budgets() {
    let mut n = clocked();
    // in -> LUT -> out: a path straight through, never allowed.
    n.port("in", "input", 10)
        .port("out", "output", 11)
        .lut2(10, 10, 11);
    // in -> r0 (0 levels, allowed), r0 -> 4 LUTs -> out2 (over the 3 allowed).
    n.ff(2, 10, 12, "r0")
        .lut2(12, 12, 13)
        .lut2(13, 13, 14)
        .lut2(14, 14, 15)
        .lut2(15, 15, 16);
    n.port("out2", "output", 16);
    let r = n.report();
    let g = group(&r, PathKind::InputToOutput);
    assert_eq!((g.endpoints, g.over_budget, g.budget), (1, 1, None));
    let g = group(&r, PathKind::InputToRegister("fast".into()));
    assert_eq!((g.max_levels, g.over_budget), (0, 0));
    let g = group(&r, PathKind::RegisterToOutput("fast".into()));
    assert_eq!((g.max_levels, g.over_budget), (4, 1));
}

#[test]
fn loops_unknown_cells_and_clocks_without_budgets_are_errors() {
    let mut n = clocked();
    n.lut2(10, 10, 11).lut2(11, 11, 10);
    let e = analyze(&n.graph().unwrap(), &card_clocks(), 600).unwrap_err();
    assert!(e.to_string().contains("combinational loop"), "{e}");

    let mut n = clocked();
    n.cell("MISTRAL_MUL27X27", json!({}));
    let e = n.graph().unwrap_err();
    assert!(e.to_string().contains("MISTRAL_MUL27X27 (1)"), "{e}");

    let mut n = clocked();
    n.ff(2, 10, 10, "r0");
    let e = analyze(&n.graph().unwrap(), &card_clocks(), 600).unwrap_err();
    assert!(e.to_string().contains("--clock fast=MHZ:LEVELS"), "{e}");
}

#[test]
fn clock_budgets_parse_from_the_command_line() {
    assert_eq!(
        ClockBudget::parse("clock=156.25:8").unwrap(),
        ClockBudget::new("clock", 156.25, 8)
    );
    assert!(ClockBudget::parse("clock=fast").is_err());
    assert!(ClockBudget::parse("clock").is_err());
}

#[test]
fn the_debt_file_is_a_ratchet() {
    let mut n = clocked();
    // Three levels on fast, whose budget is two.
    n.ff(2, 13, 10, "r0")
        .lut2(10, 10, 11)
        .lut2(11, 11, 12)
        .lut2(12, 12, 13);
    let reports = vec![("d".to_string(), n.report())];
    let debt = |levels: u16| {
        debt::DebtFile::parse(&format!(
            "[[over_budget]]\ndesign = \"d\"\npaths = \"fast register to register\"\nmax_levels = {levels}\n"
        ))
        .unwrap()
    };
    // Not listed: over budget.
    let p = debt::DebtFile::default().problems(&reports);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("3 levels (budget 2)"), "{p:?}");
    // Listed at its depth: tolerated.
    assert!(debt(3).problems(&reports).is_empty());
    // Deeper than listed: fails; shallower than listed: the entry must come down.
    assert!(debt(2).problems(&reports)[0].contains("deeper than the 2 tolerated"));
    assert!(debt(4).problems(&reports)[0].contains("lower its entry"));
    // A listed group now within budget: the entry must go.
    let mut ok = clocked();
    ok.ff(2, 11, 10, "r0").lut2(10, 10, 11);
    let p = debt(3).problems(&[("d".to_string(), ok.report())]);
    assert!(p[0].contains("remove its entry"), "{p:?}");
    // With room for the mapping's noise, one level either way passes; two do not.
    let noisy = |levels: u16| {
        debt::DebtFile::parse(&format!(
            "noise_levels = 1\n[[over_budget]]\ndesign = \"d\"\npaths = \"fast register to register\"\nmax_levels = {levels}\n"
        ))
        .unwrap()
    };
    assert!(noisy(2).problems(&reports).is_empty());
    assert!(noisy(4).problems(&reports).is_empty());
    assert!(noisy(1).problems(&reports)[0].contains("deeper than the 1 tolerated"));
    assert!(noisy(5).problems(&reports)[0].contains("lower its entry"));
    // Entries of other designs are not checked; unknown keys are refused.
    assert!(debt(3).problems(&[("other".to_string(), n.report())]).len() == 1);
    assert!(debt::DebtFile::parse("[[over_budget]]\ndesign = \"d\"\nlevels = 3\n").is_err());
}

#[test]
fn a_crossing_needs_a_second_flip_flop_or_an_enable_of_its_own_clock() {
    let unsync = |n: &Net| n.report().unsynchronized;
    // fast r0 -> slow s1 -> slow s2 -> LUT: a two-flop synchronizer.
    let mut n = clocked();
    n.ff(2, 10, 10, "r0")
        .ff(3, 10, 11, "s1")
        .ff(3, 11, 12, "s2")
        .lut2(12, 12, 13);
    n.ff(3, 13, 14, "user");
    assert_eq!(unsync(&n), vec![]);
    // fast r0 -> slow s1 -> LUT: one flip-flop, its output used at once.
    let mut n = clocked();
    n.ff(2, 10, 10, "r0")
        .ff(3, 10, 11, "s1")
        .lut2(11, 11, 12)
        .ff(3, 12, 13, "user");
    let u = unsync(&n);
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(
        (u[0].from.as_str(), u[0].to.as_str(), u[0].register.as_str()),
        ("fast", "slow", "s1")
    );
    let r = n.report();
    assert!(!r.passes());
    assert!(r
        .text(false)
        .contains("1 registers take another clock's signal"));
    assert!(!debt::DebtFile::default()
        .problems(&[("d".into(), r)])
        .is_empty());
    // fast `held` -> slow `s1`, loaded under a control (`ENA`/`SCLR` pins) that a register of
    // clock `control_clock` drives.
    let held = |control_clock: u32, controls: Value| {
        let mut n = clocked();
        n.ff(2, 10, 10, "held").ff(control_clock, 20, 20, "control");
        let mut pins = json!({"CLK": [3], "DATAIN": [10], "Q": [11]});
        pins.as_object_mut()
            .unwrap()
            .extend(controls.as_object().unwrap().clone());
        n.name("s1", 11).cell("MISTRAL_FF", pins);
        n.lut2(11, 11, 12).ff(3, 12, 13, "user");
        n
    };
    // Loaded only when a slow-clock condition enables it: held data, allowed.
    assert_eq!(unsync(&held(3, json!({"ENA": [20]}))), vec![]);
    // Or cleared unless a slow-clock condition holds (yosys maps `d = cond ? held : 0` so).
    assert_eq!(
        unsync(&held(3, json!({"ENA": ["1"], "SCLR": [20]}))),
        vec![]
    );
    // ... but not when the enable comes from the other clock.
    let n = held(2, json!({"ENA": [20]}));
    // Both the data and the enable are taken unsynchronized.
    let names: Vec<String> = unsync(&n).into_iter().map(|u| u.register).collect();
    assert_eq!(names, ["s1", "s1 (ENA)"]);
}

#[test]
fn a_debt_entry_for_paths_that_are_gone_must_go() {
    let mut n = clocked();
    n.ff(2, 11, 10, "r0").lut2(10, 10, 11);
    let d = debt::DebtFile::parse(
        "[[over_budget]]\ndesign = \"d\"\npaths = \"crossing fast -> slow\"\nmax_levels = 3\n",
    )
    .unwrap();
    let p = d.problems(&[("d".to_string(), n.report())]);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("has no paths any more"), "{p:?}");
}

#[test]
fn into_shows_the_deepest_path_ending_in_a_block() {
    let mut n = clocked();
    // r0 -> 3 LUTs -> a.deep (3 levels); r0 -> 1 LUT -> b.shallow (1 level).
    n.ff(2, 1, 10, "r0")
        .lut2(10, 10, 11)
        .lut2(11, 11, 12)
        .lut2(12, 12, 13)
        .ff(2, 13, 14, "a.deep")
        .lut2(10, 10, 15)
        .ff(2, 15, 16, "b.shallow");
    let focus = ["b".to_string(), "c".to_string()];
    let r = analyze_into(
        &n.graph().unwrap(),
        &[ClockBudget::new("fast", 250.0, 2)],
        600,
        &focus,
    )
    .unwrap();
    let g = group(&r, within("fast"));
    assert_eq!(
        g.max_levels, 3,
        "the deepest path of the group is still the other block's"
    );
    // Only blocks with a path into them appear, each with its own deepest path.
    assert_eq!(g.focus.len(), 1);
    let (block, path) = &g.focus[0];
    assert_eq!(block, "b");
    assert_eq!(path.last().map(|s| s.levels), Some(1));
    assert!(r.text(true).contains("deepest path into b, 1 levels"));
}
