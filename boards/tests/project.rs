//! The generated Quartus files against the board description, for every port count: every port
//! of the board top has exactly one location and one I/O standard, the ones the description gives,
//! and no assignment names a port the top lacks; every clock input and both datapath clocks are
//! constrained with the right period, and the clock groups name only defined clocks; names with
//! `$` are braced wherever Tcl reads them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use nanet_board::top::top_ports;
use nanet_board::{Board, Project};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn de5net() -> Board {
    Board::named(&repo().join("boards"), "de5net").unwrap()
}

fn project(board: &Board, ports: usize) -> Project {
    Project::new(board, ports, &repo().join("constraints")).unwrap()
}

/// The top-level ports in the Verilog module header, bit by bit (`NAME[i]` for vectors).
fn verilog_top_bits(verilog: &str, top: &str) -> BTreeSet<String> {
    let start = verilog
        .find(&format!("module {top} ("))
        .expect("the top module");
    let header = &verilog[start..start + verilog[start..].find(");").unwrap()];
    let mut bits = BTreeSet::new();
    for line in header.lines().skip(1) {
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| w.trim_end_matches(','))
            .collect();
        match words.as_slice() {
            [_, "wire", range, name] if range.starts_with('[') => {
                let msb: usize = range[1..range.find(':').unwrap()].parse().unwrap();
                for i in 0..=msb {
                    bits.insert(format!("{name}[{i}]"));
                }
            }
            [_, "wire", name] => {
                bits.insert(name.to_string());
            }
            _ => panic!("unexpected header line {line:?}"),
        }
    }
    bits
}

/// `-to` targets of the `.qsf`: location and I/O standard per port.
fn qsf_assignments(qsf: &str) -> (BTreeMap<String, Vec<String>>, BTreeMap<String, Vec<String>>) {
    let mut loc = BTreeMap::<String, Vec<String>>::new();
    let mut io = BTreeMap::<String, Vec<String>>::new();
    for line in qsf.lines() {
        let Some((head, to)) = line.split_once(" -to ") else {
            continue;
        };
        let to = to.trim().trim_matches(|c| c == '{' || c == '}').to_string();
        if let Some(pin) = head.strip_prefix("set_location_assignment PIN_") {
            loc.entry(to).or_default().push(pin.to_string());
        } else if let Some(std) = head.strip_prefix("set_instance_assignment -name IO_STANDARD ") {
            io.entry(to)
                .or_default()
                .push(std.trim_matches('"').to_string());
        }
    }
    (loc, io)
}

#[test]
fn every_top_port_has_its_location_and_io_standard_and_nothing_else_is_assigned() {
    let board = de5net();
    for ports in 1..=board.max_ports() {
        let p = project(&board, ports);
        let top = p.file(&format!("{}.v", board.top)).unwrap();
        let bits = verilog_top_bits(top, &board.top);
        // The header is what top_ports says.
        let declared: usize = top_ports(&board, ports).iter().map(|p| p.width).sum();
        assert_eq!(bits.len(), declared);
        let (loc, io) = qsf_assignments(p.file(&format!("{}.qsf", board.top)).unwrap());
        let want: BTreeMap<String, (String, String)> = board
            .pins(ports)
            .into_iter()
            .map(|a| (a.port, (a.pin, a.io_standard)))
            .collect();
        for bit in &bits {
            let (pin, std) = want
                .get(bit)
                .unwrap_or_else(|| panic!("{ports} ports: the description has no pin for {bit}"));
            assert_eq!(
                loc.get(bit),
                Some(&vec![pin.clone()]),
                "{ports} ports: {bit}"
            );
            assert_eq!(
                io.get(bit),
                Some(&vec![std.clone()]),
                "{ports} ports: {bit}"
            );
        }
        for name in loc.keys().chain(io.keys()) {
            assert!(
                bits.contains(name),
                "{ports} ports: {name} is not a port of the top"
            );
        }
    }
}

#[test]
fn every_clock_is_constrained_and_the_groups_name_defined_clocks() {
    let board = de5net();
    let p = project(&board, 4);
    let sdc = p.file(&format!("{}.sdc", board.top)).unwrap();
    let mut clocks = BTreeMap::new();
    for line in sdc.lines().filter(|l| l.starts_with("create_clock")) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let name = w[w.iter().position(|x| *x == "-name").unwrap() + 1];
        let period: f64 = w[w.iter().position(|x| *x == "-period").unwrap() + 1]
            .parse()
            .unwrap();
        let target = line[line.find('{').unwrap() + 1..line.find('}').unwrap()].to_string();
        clocks.insert(target, (name.to_string(), period));
    }
    let expect = [
        (&board.management_clock.port, board.management_clock.mhz),
        (&board.pcie.refclk.port, board.pcie.refclk.mhz),
        (&board.sfp_refclk.port, board.sfp_refclk.mhz),
        (&"core_clk".to_string(), 250.0),
        (&"net_clk".to_string(), 156.25),
    ];
    for (target, mhz) in expect {
        let (_, period) = clocks
            .get(target.as_str())
            .unwrap_or_else(|| panic!("no create_clock on {target}: {sdc}"));
        assert!(
            (period - 1000.0 / mhz).abs() < 0.001,
            "{target}: {period} ns"
        );
    }
    // The clock inputs of the top are all there.
    for port in top_ports(&board, 4) {
        if port.name.contains("REFCLK") || port.name.starts_with("OSC_") {
            assert!(
                clocks.contains_key(&port.name),
                "{} unconstrained",
                port.name
            );
        }
    }
    let names: BTreeSet<String> = clocks.values().map(|(n, _)| n.clone()).collect();
    let groups = sdc
        .lines()
        .find(|l| l.starts_with("set_clock_groups"))
        .unwrap();
    for g in groups.split("-group").skip(1) {
        let g = g.trim().trim_matches(|c| c == '{' || c == '}');
        assert!(names.contains(g), "group {g} is not a defined clock");
    }
    // The hand-written crossings file is listed after the generated one.
    let qsf = p.file(&format!("{}.qsf", board.top)).unwrap();
    let generated = qsf.find("SDC_FILE nanet_de5net.sdc").unwrap();
    let cdc = qsf.find("SDC_FILE de5net_cdc.sdc").unwrap();
    assert!(generated < cdc);
    assert!(p.file("de5net_cdc.sdc").unwrap().contains("rgray_s1"));
}

/// Every `$` outside braces, per line (Tcl substitutes those).
fn unbraced_dollars(text: &str) -> Vec<String> {
    let mut bad = vec![];
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let mut depth = 0;
        for c in line.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                '$' if depth == 0 => {
                    bad.push(line.to_string());
                    break;
                }
                _ => {}
            }
        }
    }
    bad
}

#[test]
fn names_with_dollars_are_braced_in_every_tcl_file() {
    let board = de5net();
    let p = project(&board, 4);
    for (name, text) in &p.files {
        if name.ends_with(".qsf") || name.ends_with(".sdc") {
            assert_eq!(unbraced_dollars(text), Vec::<String>::new(), "{name}");
        }
    }
    // The checker itself: a rust-hdl name unbraced is caught, braced it is not.
    assert_eq!(unbraced_dollars("set_false_path -to nic|rx$fifos").len(), 1);
    assert!(unbraced_dollars("set_false_path -to [get_registers {nic|rx$fifos}]").is_empty());
    assert_eq!(nanet_board::quartus::tcl_word("a$b"), "{a$b}");
}

#[test]
fn a_port_count_the_board_cannot_have_is_refused() {
    let board = de5net();
    for ports in [0, 5] {
        let e = Project::new(&board, ports, &repo().join("constraints"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("PORTS must be 1 to 4"), "{e}");
    }
}

#[test]
fn the_top_instantiates_each_vendor_ip_and_the_stubs_declare_them() {
    let board = de5net();
    let p = project(&board, 3);
    let top = p.file("nanet_de5net.v").unwrap();
    let stubs = p.file("ip_stubs.v").unwrap();
    for (module, count) in [
        ("nanet_de5net_pcie", 1),
        ("nanet_de5net_phy", 1),
        ("nanet_de5net_mac", 3),
        ("nanet_de5net_reconfig", 1),
    ] {
        assert_eq!(
            top.matches(&format!("    {module} ")).count(),
            count,
            "{module}"
        );
        assert!(stubs.contains(&format!("module {module} (")), "{module}");
        assert!(
            p.file("nanet_de5net.qsf")
                .unwrap()
                .contains(&format!("ip/{module}/synthesis/{module}.qip")),
            "{module}"
        );
    }
    // Three cages used, the fourth's pins absent.
    assert!(top.contains("SFPC_TX_p") && !top.contains("SFPD_TX_p"));
    assert!(top.contains("assign link_up[3] = 1'b0;"));
    let readme = p.file("README.md").unwrap();
    assert!(readme.contains("3 channel(s)") && readme.contains("Si570"));
}
