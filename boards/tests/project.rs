//! The generated Quartus files against the board description, for every port count: every port
//! of the board top has exactly one location and one I/O standard, the ones the description gives,
//! and no assignment names a port the top lacks; clocks are created on the clock inputs only, with
//! the right periods, and grouped with the clocks the PLL, the Hard IP and the PHY derive from
//! them; Intel's Hard IP false paths are there; names with `$` are braced wherever Tcl reads
//! them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use nanet_board::ip::IpPort;
use nanet_board::netlist::ports_of_generated;
use nanet_board::top::top_ports;
use nanet_board::{Board, Project};
use nanet_contract::pcie::PcieVariant;
use nanet_hdl::verilog::{nic_top_ports, nic_verilog, DEFAULT_PCIE};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn de5net() -> Board {
    Board::named(&repo().join("boards"), "de5net").unwrap()
}

fn project(board: &Board, ports: usize) -> Project {
    Project::new(board, ports, DEFAULT_PCIE, &repo().join("constraints")).unwrap()
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
fn clocks_are_created_on_clock_inputs_only_and_grouped_with_the_clocks_derived_from_them() {
    let board = de5net();
    let p = project(&board, 4);
    let sdc = p.file(&format!("{}.sdc", board.top)).unwrap();
    let top = p.file(&format!("{}.v", board.top)).unwrap();
    let inputs: BTreeSet<String> = top_ports(&board, 4)
        .into_iter()
        .filter(|p| p.dir == nanet_board::ip::Dir::In)
        .map(|p| p.name)
        .collect();
    let mut clocks = BTreeMap::new();
    for line in sdc.lines().filter(|l| l.starts_with("create_clock")) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let name = w[w.iter().position(|x| *x == "-name").unwrap() + 1];
        let period: f64 = w[w.iter().position(|x| *x == "-period").unwrap() + 1]
            .parse()
            .unwrap();
        let target = line
            .split_once("[get_ports {")
            .unwrap_or_else(|| panic!("a clock created on something other than a port: {line}"))
            .1;
        let target = target[..target.find('}').unwrap()].to_string();
        assert!(
            inputs.contains(&target),
            "{target} is not an input of the top"
        );
        clocks.insert(target, (name.to_string(), period));
    }
    assert!(
        !sdc.contains("get_nets"),
        "no clock or constraint on a net: {sdc}"
    );
    let expect = [
        (&board.management_clock.port, board.management_clock.mhz),
        (&board.pcie.refclk.port, board.pcie.refclk.mhz),
        (&board.sfp_refclk.port, board.sfp_refclk.mhz),
    ];
    assert_eq!(clocks.len(), expect.len(), "{sdc}");
    for (target, mhz) in expect {
        let (_, period) = clocks
            .get(target.as_str())
            .unwrap_or_else(|| panic!("no create_clock on {target}: {sdc}"));
        assert!(
            (period - 1000.0 / mhz).abs() < 0.001,
            "{target}: {period} ns"
        );
    }
    assert!(sdc.contains("\nderive_pll_clocks\n"), "{sdc}");
    // Each group: a created clock and the clocks an instance of the top derives (`inst|*`); the
    // instances that derive clocks (the PLL, the Hard IP, the PHY) each in one group.
    let names: BTreeSet<&str> = clocks.values().map(|(n, _)| n.as_str()).collect();
    let groups = sdc[sdc
        .find("set_clock_groups -asynchronous")
        .expect("clock groups")..]
        .split("\n\n")
        .next()
        .unwrap()
        .replace("\\\n", " ");
    let mut instances = BTreeSet::new();
    for g in groups.split("-group").skip(1) {
        let inner = g
            .trim()
            .trim_start_matches("[get_clocks {")
            .trim_end_matches("}]");
        let [base, derived]: [&str; 2] = inner
            .split_whitespace()
            .collect::<Vec<_>>()
            .try_into()
            .unwrap_or_else(|_| panic!("group {g}"));
        assert!(names.contains(base), "{base} is not a created clock");
        let instance = derived.strip_suffix("|*").expect("an instance's clocks");
        assert!(
            top.lines().any(|l| l.starts_with("    nanet_de5net_")
                && l.split_whitespace().nth(1) == Some(instance)),
            "no instance {instance} in the top"
        );
        instances.insert(instance.to_string());
    }
    assert_eq!(
        instances,
        ["mgmt_pll", "pcie", "phy"].map(String::from).into(),
        "{groups}"
    );
    for l in nanet_board::quartus::HIP_FALSE_PATHS {
        assert!(sdc.contains(l), "Intel's false path missing: {l}");
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
    let tcl: Vec<&str> = p
        .names()
        .filter(|n| n.ends_with(".qsf") || n.ends_with(".sdc"))
        .collect();
    assert!(tcl.len() >= 3, "{tcl:?}");
    for name in tcl {
        let text = p.file(name).unwrap();
        assert_eq!(unbraced_dollars(text), Vec::<String>::new(), "{name}");
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
        let e = Project::new(&board, ports, DEFAULT_PCIE, &repo().join("constraints"))
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
        ("nanet_de5net_mgmt_pll", 1),
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
    assert!(
        readme.contains("| Number of channels | `num_channels` | `3` |")
            && readme.contains("Si570"),
        "{readme}"
    );
}

/// `make verilog PCIE=gen3`: the same board top (every pin, the same instances) with the 256-bit
/// NIC on the Hard IP at Gen3 x8; a board whose PCIe stops at Gen2 refuses it and says why.
#[test]
fn a_gen3_project_has_the_same_pins_and_a_256_bit_card_and_a_gen2_board_refuses_it() {
    let board = de5net();
    let gen2 = project(&board, 4);
    let gen3 = Project::new(&board, 4, PcieVariant::Gen3x8, &repo().join("constraints")).unwrap();
    let top2 = gen2.file("nanet_de5net.v").unwrap();
    let top3 = gen3.file("nanet_de5net.v").unwrap();
    assert_eq!(
        verilog_top_bits(top2, "nanet_de5net"),
        verilog_top_bits(top3, "nanet_de5net")
    );
    assert!(top2.contains("wire [127:0] nic_pcie_rx_data;"));
    assert!(top3.contains("wire [255:0] nic_pcie_rx_data;"));
    assert!(top3.contains("wire [255:0] nic_pcie_tx_data;"));
    let tcl = gen3.file("create_project.tcl").unwrap();
    assert!(tcl.contains("gen123_lane_rate_mode_hwtcl {Gen3 (8.0 Gbps)}"));
    assert!(tcl.contains("ast_width_hwtcl {Avalon-ST 256-bit}"));
    assert!(gen3.file("README.md").unwrap().contains("PCIE=gen3"));

    let mut old = board.clone();
    old.pcie.generation = 2;
    let e = Project::new(&old, 4, PcieVariant::Gen3x8, &repo().join("constraints"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("runs PCIe up to Gen2 x8, not Gen3 x8"), "{e}");
    assert!(Project::new(&old, 4, PcieVariant::Gen2x8, &repo().join("constraints")).is_ok());
}

/// The board top wires the card by the port list read from the card's block (its Verilog is
/// generated only when the project's files are written): it is the list the card's generated
/// Verilog declares, name, width and direction, in the header's order.
#[test]
fn the_cards_ports_read_from_its_block_are_those_its_verilog_declares() {
    // (Two ports: the per-port signals of arrays; one at Gen3 x8: the 256-bit widths.)
    for (variant, ports) in [(PcieVariant::Gen2x8, 2), (PcieVariant::Gen3x8, 1)] {
        let read: Vec<IpPort> = nic_top_ports(variant, ports)
            .unwrap()
            .into_iter()
            .map(IpPort::from)
            .collect();
        let verilog = nic_verilog(variant, ports, "nanet_nic").unwrap();
        let declared = ports_of_generated(&verilog, "nanet_nic").unwrap();
        assert_eq!(read, declared, "{variant}, {ports} ports");
        // Interfaces' signals are among them, named as the Verilog names them.
        assert!(read.iter().any(|p| p.name.contains('$')), "{read:?}");
        assert!(nic_top_ports(variant, 5).is_none());
    }
}
