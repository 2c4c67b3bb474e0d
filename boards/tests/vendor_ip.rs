//! Every vendor IP instance of the generated board top (one and four ports) against Intel's
//! interfaces for the settings the project names, as stated independently of the project by the
//! fixtures in `shared/vendor-ip/` (Intel's `_hw.tcl` evaluated for those settings and checked
//! against Intel-generated variations; `NANET_VENDOR_IP` names another folder). For each instance:
//! no connection to a port the variation does not have (a port that needs another setting is named
//! with that setting), the stub's ports are exactly the variation's with Intel's directions and
//! widths, and every input of the variation is connected. The settings the project generates the
//! variation with (`create_project.tcl`) are those the fixture states, and the Hard IP's `test_in`
//! is what Intel requires and recommends.
//!
//! The fixtures state one variation each: the PHY with 4 channels and the controller with 18
//! interfaces. For the one-port card they are scaled as Intel's notes in them say: per-channel
//! ports (`<name>_<c>`) for the channels there are, one bit per channel in the per-channel
//! vectors, and 70 / 46 bits per reconfiguration interface (two per PHY channel, ten for the Hard
//! IP at Gen2 x8). The management PLL (`altera_pll`) has no fixture; it is named as unchecked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nanet_board::ip::{Dir, IpBlock};
use nanet_board::top::TopIp;
use nanet_board::{Board, Project};
use nanet_contract::pcie::PcieVariant;
use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn fixtures() -> PathBuf {
    let dir = std::env::var_os("NANET_VENDOR_IP")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/vendor-ip"));
    assert!(
        dir.join("README.md").exists(),
        "{} missing: Intel's IP interfaces live in shared/vendor-ip beside the repository (or set \
         NANET_VENDOR_IP)",
        dir.display()
    );
    dir
}

/// A port of Intel's variation.
#[derive(Clone, Debug)]
struct IntelPort {
    dir: Dir,
    width: usize,
    /// The setting it needs, when it is not in every variation.
    condition: Option<String>,
}

/// One fixture: the variation's settings and its ports (present or not under them).
struct Fixture {
    file: String,
    /// The whole file (interface properties and notes).
    json: Value,
    variation: BTreeMap<String, String>,
    ports: BTreeMap<String, IntelPort>,
}

fn load(name: &str) -> Fixture {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    let variation = v["variation"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    let ports = v["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let dir = match p["direction"].as_str().unwrap() {
                "in" => Dir::In,
                "out" => Dir::Out,
                d => panic!("{name}: direction {d}"),
            };
            (
                p["name"].as_str().unwrap().to_string(),
                IntelPort {
                    dir,
                    width: p["width"].as_u64().unwrap() as usize,
                    condition: p["condition"].as_str().map(String::from),
                },
            )
        })
        .collect();
    Fixture {
        json: v.clone(),
        file: name.to_string(),
        variation,
        ports,
    }
}

impl Fixture {
    /// Whether a port's condition (`a=b && c!=d`) holds for the variation.
    fn holds(&self, condition: &Option<String>) -> bool {
        let Some(c) = condition else { return true };
        c.split(" && ").all(|clause| {
            let (name, value, equal) = match clause.split_once("!=") {
                Some((n, v)) => (n, v, false),
                None => {
                    let (n, v) = clause.split_once('=').unwrap();
                    (n, v, true)
                }
            };
            let actual = self
                .variation
                .get(name)
                .unwrap_or_else(|| panic!("{}: condition on unknown {name}", self.file));
            (actual == value) == equal
        })
    }

    /// The variation scaled to `channels` channels of `per` per-channel units, and reconfiguration
    /// buses of `interfaces` interfaces (the fixture states `from_channels` / `from_interfaces`).
    fn scaled(
        &mut self,
        from_channels: usize,
        channels: usize,
        from_interfaces: usize,
        interfaces: usize,
    ) {
        let ports = std::mem::take(&mut self.ports);
        for (name, mut p) in ports {
            if let Some((_, c)) = name.rsplit_once('_') {
                if let Ok(c) = c.parse::<usize>() {
                    if c >= channels {
                        continue;
                    }
                }
            }
            if name.contains("reconfig_to_xcvr") || name.contains("reconfig_from_xcvr") {
                p.width = p.width / from_interfaces * interfaces;
            } else if p.width == from_channels && name != "pll_locked" {
                p.width = channels;
            }
            self.ports.insert(name, p);
        }
        for key in ["num_channels", "number_of_reconfig_interfaces"] {
            if let Some(v) = self.variation.get_mut(key) {
                *v = if key == "num_channels" {
                    channels
                } else {
                    interfaces
                }
                .to_string();
            }
        }
    }
}

/// The connections of instance `inst` of `module` in the top: port -> expression.
fn connections(top: &str, module: &str, inst: &str) -> BTreeMap<String, String> {
    let head = format!("    {module} {inst} (\n");
    let start = top
        .find(&head)
        .unwrap_or_else(|| panic!("no instance {inst} of {module}"))
        + head.len();
    let body = &top[start..start + top[start..].find("    );").unwrap()];
    body.lines()
        .map(|l| {
            let l = l.trim().trim_end_matches(',');
            let (port, expr) = l.strip_prefix('.').unwrap().split_once('(').unwrap();
            (
                port.trim().to_string(),
                expr.trim_end_matches(')').trim().to_string(),
            )
        })
        .collect()
}

/// The ports the stub of `module` declares in `ip_stubs.v`.
fn stub_ports(stubs: &str, module: &str) -> BTreeMap<String, (Dir, usize)> {
    let head = format!("module {module} (\n");
    let start = stubs.find(&head).unwrap() + head.len();
    let body = &stubs[start..start + stubs[start..].find(");").unwrap()];
    body.lines()
        .map(|l| {
            let w: Vec<&str> = l
                .split_whitespace()
                .map(|w| w.trim_end_matches(','))
                .collect();
            let dir = if w[0] == "input" { Dir::In } else { Dir::Out };
            let (width, name) = match w.as_slice() {
                [_, "wire", range, name] => (
                    range[1..range.find(':').unwrap()].parse::<usize>().unwrap() + 1,
                    *name,
                ),
                [_, "wire", name] => (1, *name),
                _ => panic!("stub line {l:?}"),
            };
            (name.to_string(), (dir, width))
        })
        .collect()
}

/// The parameters `create_project.tcl` generates `module` with.
fn generated_settings(tcl: &str, module: &str) -> BTreeMap<String, String> {
    let head = format!("generate_ip {module} ");
    let start = tcl
        .find(&head)
        .unwrap_or_else(|| panic!("{module} is not generated"));
    let body = &tcl[start..];
    let body = &body[body.find("{\n").unwrap() + 2..body.find("\n}\n").unwrap()];
    body.lines()
        .map(|l| {
            let (k, v) = l.trim().split_once(' ').unwrap();
            (
                k.to_string(),
                v.trim_matches(|c| c == '{' || c == '}').to_string(),
            )
        })
        .collect()
}

/// Everything wrong with `inst` of `block` against Intel's fixture `f`.
fn check_instance(top: &str, stubs: &str, block: &IpBlock, inst: &str, f: &Fixture) -> Vec<String> {
    let mut wrong = vec![];
    let what = format!("{inst} ({}, {})", block.module, f.file);
    let present: BTreeMap<&String, &IntelPort> = f
        .ports
        .iter()
        .filter(|(_, p)| f.holds(&p.condition))
        .collect();
    let conns = connections(top, &block.module, inst);
    for (port, expr) in &conns {
        match f.ports.get(port) {
            None => wrong.push(format!("{what}: Intel's IP has no port {port}")),
            Some(p) if !f.holds(&p.condition) => wrong.push(format!(
                "{what}: port {port} exists only with {} (not the settings the project names)",
                p.condition.as_deref().unwrap()
            )),
            Some(p) if p.dir == Dir::In && expr.is_empty() => {
                wrong.push(format!("{what}: required input {port} left open"))
            }
            _ => {}
        }
    }
    for (port, p) in &present {
        if p.dir == Dir::In && !conns.contains_key(*port) {
            wrong.push(format!("{what}: required input {port} left open"));
        }
    }
    let stub = stub_ports(stubs, &block.module);
    for (port, p) in &present {
        match stub.get(*port) {
            None => wrong.push(format!("{what}: the stub lacks Intel's port {port}")),
            Some(&(dir, width)) if dir != p.dir || width != p.width => wrong.push(format!(
                "{what}: {port} is {dir:?} [{width}] in the stub, {:?} [{}] in Intel's IP",
                p.dir, p.width
            )),
            _ => {}
        }
    }
    wrong
}

/// The settings the project generates `block` with against the fixture's variation.
fn check_settings(tcl: &str, block: &IpBlock, f: &Fixture) -> Vec<String> {
    let generated = generated_settings(tcl, &block.module);
    let mut wrong = vec![];
    for (param, value) in &f.variation {
        // The device comes from the project (`--system-info`), not a parameter.
        if ["INTENDED_DEVICE_FAMILY", "device_family", "DEVICE_FAMILY"].contains(&param.as_str()) {
            continue;
        }
        match generated.get(param) {
            None => wrong.push(format!(
                "{}: {param} not set (Intel's fixture: {value:?})",
                block.module
            )),
            Some(v) if v != value => wrong.push(format!(
                "{}: {param} = {v:?}, Intel's fixture {value:?}",
                block.module
            )),
            _ => {}
        }
    }
    wrong
}

/// Everything wrong with a block's own ports and settings against Intel's fixture `f` (without a
/// top: the ports the variation has, each with Intel's direction and width, none it lacks).
fn check_block(block: &IpBlock, f: &Fixture) -> Vec<String> {
    let what = format!("{} ({})", block.module, f.file);
    let mut wrong = vec![];
    for p in &block.ports {
        match f.ports.get(&p.name) {
            Some(i) if f.holds(&i.condition) => {
                if i.dir != p.dir || i.width != p.width {
                    wrong.push(format!(
                        "{what}: {} is {:?} [{}], {:?} [{}] in Intel's IP",
                        p.name, p.dir, p.width, i.dir, i.width
                    ));
                }
            }
            _ => wrong.push(format!("{what}: Intel's variation has no port {}", p.name)),
        }
    }
    for (name, i) in &f.ports {
        if f.holds(&i.condition) && block.port(name).is_none() {
            wrong.push(format!("{what}: lacks Intel's port {name}"));
        }
    }
    for (param, value) in &f.variation {
        if ["INTENDED_DEVICE_FAMILY", "device_family", "DEVICE_FAMILY"].contains(&param.as_str()) {
            continue;
        }
        match block.setting(param) {
            Some(s) if &s.value == value => {}
            Some(s) => wrong.push(format!(
                "{what}: {param} = {:?}, Intel's fixture {value:?}",
                s.value
            )),
            None => wrong.push(format!(
                "{what}: {param} not set (Intel's fixture: {value:?})"
            )),
        }
    }
    wrong
}

/// The Hard IP and the reconfiguration controller (Hard IP and four PHY channels) of each PCIe
/// variant against Intel's fixture of that variant: Gen2 x8 at 128 bits with 18 interfaces, Gen3
/// x8 at 256 bits with 19 and adaptive equalization. The board top's instances of the variant the
/// card is built for are checked through the whole project above.
#[test]
fn the_hard_ip_and_reconfiguration_controller_of_each_pcie_variant_are_intels() {
    use nanet_board::ip;
    let mut wrong = vec![];
    for (v, hip, reconfig) in [
        (
            PcieVariant::Gen2x8,
            "pcie_sv_hip_ast_gen2x8_128.json",
            "alt_xcvr_reconfig_18.json",
        ),
        (
            PcieVariant::Gen3x8,
            "pcie_sv_hip_ast_gen3x8_256.json",
            "alt_xcvr_reconfig_19.json",
        ),
    ] {
        let f = load(hip);
        let block = ip::pcie_hip("hip", v);
        wrong.extend(check_block(&block, &f));
        // The check itself finds a wrong width and a setting not Intel's.
        let mut broken = block.clone();
        broken
            .ports
            .iter_mut()
            .find(|p| p.name == "tx_st_data")
            .unwrap()
            .width = 64;
        broken
            .settings
            .iter_mut()
            .find(|s| s.param == "pcie_spec_version_hwtcl")
            .unwrap()
            .value = "1.1".into();
        let e = check_block(&broken, &f).join("\n");
        assert!(
            e.contains("tx_st_data is In [64]") && e.contains("pcie_spec_version_hwtcl"),
            "{e}"
        );
        let interfaces = ip::pcie_reconfig_interfaces(v) + ip::phy_reconfig_interfaces(4);
        let f = load(reconfig);
        assert_eq!(
            f.variation["number_of_reconfig_interfaces"],
            interfaces.to_string(),
            "{v}"
        );
        wrong.extend(check_block(&ip::xcvr_reconfig("r", interfaces, v), &f));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The fixtures of a top of `ports` ports, scaled to it: (block, instances, fixture).
fn checks(ip: &TopIp, ports: usize) -> Vec<(&IpBlock, Vec<String>, Fixture)> {
    let mut phy = load("xcvr_10gbaser_4ch.json");
    phy.scaled(4, ports, 8, 2 * ports);
    // Intel's reconfiguration fixtures have four PHY channels behind the Hard IP's interfaces.
    let hip = nanet_board::ip::pcie_reconfig_interfaces(ip.variant);
    let fixture = format!("alt_xcvr_reconfig_{}.json", hip + 8);
    let mut reconfig = load(&fixture);
    reconfig.scaled(4, ports, hip + 8, hip + 2 * ports);
    vec![
        (&ip.pcie, vec!["pcie".into()], load(hip_fixture(ip.variant))),
        (&ip.phy, vec!["phy".into()], phy),
        (
            &ip.mac,
            (0..ports).map(|p| format!("mac{p}")).collect(),
            load("eth_10g_mac.json"),
        ),
        (&ip.reconfig, vec!["reconfig".into()], reconfig),
    ]
}

/// The value the top gives the Hard IP's `test_in` against what Intel requires of it (the
/// fixture's `hip_ctrl` interface: bit 1 and bits 31:8 zero, bits 4:3 `01`) and recommends (bits 5
/// and 7 set).
fn check_test_in(top: &str, module: &str, f: &Fixture) -> Vec<String> {
    let conns = connections(top, module, "pcie");
    let expr = conns.get("test_in").map(String::as_str).unwrap_or("");
    let Some(hex) = expr.strip_prefix("32'h") else {
        return vec![format!("test_in is {expr:?}, not a 32-bit constant")];
    };
    let v = u32::from_str_radix(hex, 16).unwrap();
    let req = &f.json["interface_properties"]["hip_ctrl"]["test_in_required"];
    let mut wrong = vec![];
    if req["[1]"] == 0 && v & 2 != 0 {
        wrong.push(format!("test_in {v:#x}: bit 1 must be 0"));
    }
    if req["[4:3]"] == "2'b01" && (v >> 3) & 3 != 1 {
        wrong.push(format!("test_in {v:#x}: bits 4:3 must be 01"));
    }
    if req["[31:8]"] == 0 && v >> 8 != 0 {
        wrong.push(format!("test_in {v:#x}: bits 31:8 must be 0"));
    }
    if req["recommended"] == "[5]=1, [7]=1" && v & 0xA0 != 0xA0 {
        wrong.push(format!("test_in {v:#x}: Intel recommends bits 5 and 7"));
    }
    wrong
}

/// Intel's fixture of the Hard IP of `variant`.
fn hip_fixture(variant: PcieVariant) -> &'static str {
    match variant {
        PcieVariant::Gen2x8 => "pcie_sv_hip_ast_gen2x8_128.json",
        PcieVariant::Gen3x8 => "pcie_sv_hip_ast_gen3x8_256.json",
    }
}

fn de5net() -> Board {
    Board::named(&repo().join("boards"), "de5net").unwrap()
}

#[test]
fn every_vendor_ip_instance_matches_intels_interface_for_the_named_settings() {
    let board = de5net();
    for (ports, variant) in [
        (1, PcieVariant::Gen2x8),
        (4, PcieVariant::Gen2x8),
        (1, PcieVariant::Gen3x8),
        (4, PcieVariant::Gen3x8),
    ] {
        let p = Project::new(&board, ports, variant, &repo().join("constraints")).unwrap();
        let top = p.file("nanet_de5net.v").unwrap();
        let stubs = p.file("ip_stubs.v").unwrap();
        let tcl = p.file("create_project.tcl").unwrap();
        let ip = TopIp::new(&board, ports, variant);
        let mut wrong = vec![];
        let mut checked = vec![];
        for (block, instances, f) in checks(&ip, ports) {
            for inst in &instances {
                wrong.extend(check_instance(top, stubs, block, inst, &f));
            }
            wrong.extend(check_settings(tcl, block, &f));
            checked.push(block.module.clone());
        }
        wrong.extend(check_test_in(
            top,
            &ip.pcie.module,
            &load(hip_fixture(variant)),
        ));
        assert!(
            wrong.is_empty(),
            "{ports} port(s), {variant}:\n{}",
            wrong.join("\n")
        );
        // Every vendor instance of the top is checked but the PLL, which has no fixture.
        let unchecked: Vec<_> = ip
            .all()
            .into_iter()
            .filter(|b| !checked.contains(&b.module))
            .map(|b| b.component)
            .collect();
        assert_eq!(unchecked, ["altera_pll"]);
    }
}

/// The check itself fails on each kind of mistake: a port Intel's IP lacks, one that needs another
/// setting, a wrong width, an input left open, a setting not Intel's.
#[test]
fn the_check_finds_a_wrong_port_width_open_input_and_setting() {
    let board = de5net();
    let p = Project::new(&board, 4, PcieVariant::Gen2x8, &repo().join("constraints")).unwrap();
    let top = p.file("nanet_de5net.v").unwrap();
    let stubs = p.file("ip_stubs.v").unwrap();
    let tcl = p.file("create_project.tcl").unwrap();
    let ip = TopIp::new(&board, 4, PcieVariant::Gen2x8);
    let f = load("pcie_sv_hip_ast_gen2x8_128.json");
    let found =
        |top: &str, stubs: &str| check_instance(top, stubs, &ip.pcie, "pcie", &f).join("\n");
    assert_eq!(found(top, stubs), "");
    let broken = top.replace(".tl_cfg_sts(", ".tl_cfg_ctl_wr(");
    assert!(found(&broken, stubs).contains("Intel's IP has no port tl_cfg_ctl_wr"));
    let broken = top.replace(".rx_st_mask(", ".rx_st_be(");
    let e = found(&broken, stubs);
    assert!(
        e.contains("rx_st_be exists only with use_rx_st_be_hwtcl=1"),
        "{e}"
    );
    assert!(e.contains("required input rx_st_mask left open"), "{e}");
    let broken = top.replace(".test_in(32'h000000A8)", ".test_in()");
    assert!(found(&broken, stubs).contains("required input test_in left open"));
    let broken = stubs.replace("input  wire [31:0] test_in", "input  wire [15:0] test_in");
    assert!(found(top, &broken).contains("test_in is In [16] in the stub, In [32] in Intel's IP"));
    let broken = top.replace(".test_in(32'h000000A8)", ".test_in(32'h00000000)");
    let e = check_test_in(&broken, &ip.pcie.module, &f).join("\n");
    assert!(
        e.contains("bits 4:3 must be 01") && e.contains("bits 5 and 7"),
        "{e}"
    );
    assert_eq!(
        check_test_in(top, &ip.pcie.module, &f),
        Vec::<String>::new()
    );
    let broken = tcl.replace("rxbuffer_rxreq_hwtcl Low", "rxbuffer_rxreq_hwtcl Balanced");
    let e = check_settings(&broken, &ip.pcie, &f).join("\n");
    assert!(e.contains("rxbuffer_rxreq_hwtcl = \"Balanced\""), "{e}");
}

/// The card does not read the Hard IP's completion space (`ko_cpl_spc_header`/`_data`, left
/// open): it stays within what its settings reserve. With "RX buffer credit allocation" at Low
/// (both variants), Intel's fixtures give the completion part of the receive buffer as 195
/// headers and 781 data credits of 16 bytes. The read engine has at most `READ_TAGS` reads of
/// `MAX_READ_BYTES` in flight, each answered by at most one completion per 64-byte read
/// completion boundary it crosses and one more: more tags or longer reads that overflow the
/// buffer fail here.
#[test]
fn the_read_engines_completions_fit_the_completion_space_the_hard_ips_settings_reserve() {
    use nanet_hdl::pcie::read::{MAX_READ_BYTES, READ_TAGS};
    for v in PcieVariant::ALL {
        let hip = nanet_board::ip::pcie_hip("p", v);
        let alloc = hip
            .settings
            .iter()
            .find(|s| s.param == "rxbuffer_rxreq_hwtcl")
            .map(|s| s.value.as_str());
        assert_eq!(alloc, Some("Low"), "{v}");
        let f = load(hip_fixture(v));
        let space = &f.json["derived"]["rx_buffer_credits_low"];
        let (hdr, data) = (
            space["completion_hdr"].as_u64().unwrap() as usize,
            space["completion_data"].as_u64().unwrap() as usize,
        );
        assert_eq!((hdr, data), (195, 781), "{v}");
        let data_in_flight = READ_TAGS * MAX_READ_BYTES / 16;
        let headers_in_flight = READ_TAGS * (MAX_READ_BYTES / 64 + 1);
        assert!(
            data_in_flight <= data && headers_in_flight <= hdr,
            "{v}: {data_in_flight} data credits and {headers_in_flight} completion headers in \
             flight, the Hard IP holds {data} and {hdr}"
        );
    }
}
