//! `make timing` on real yosys netlists: a deliberately deep design is reported with its level
//! count and rejected, a shallow one passes, and the walk's cell delays are yosys's own.

use std::path::{Path, PathBuf};
use std::process::Command;

use nanet_board::synth::{synthesize, Mapping};
use nanet_board::timing::{self, cells, ClockBudget, PathKind, ROUTE_PS};

/// Seven levels register to register: three 32-bit adds chained through XORs.
const DEEP: &str = "module deep(input clock, input [31:0] a, input [31:0] b, output reg [31:0] q);
  reg [31:0] r [0:7];
  integer i;
  always @(posedge clock) begin
    r[0] <= a; r[1] <= b;
    for (i = 2; i < 8; i = i + 1) r[i] <= r[i-1] ^ {r[i-2][30:0], r[i-2][31]};
    q <= ((((((r[0] + r[1]) ^ r[2]) + r[3]) ^ r[4]) + r[5]) ^ r[6]) + r[7];
  end
endmodule
";

/// The same registers with one add: one level.
const SHALLOW: &str =
    "module shallow(input clock, input [31:0] a, input [31:0] b, output reg [31:0] q);
  reg [31:0] r0, r1;
  always @(posedge clock) begin
    r0 <= a; r1 <= b; q <= r0 + r1;
  end
endmodule
";

/// A slow path (a 64-bit add into a 32-bit compare) beside sixteen overlapping parity-and-AND
/// functions of three LUT levels at best, whose LUTs could be shared if they were deeper.
const PADDED: &str = "module padded(input clock, input [63:0] a, input [63:0] b, input [47:0] s,
  output reg slow, output reg [15:0] o);
  reg [63:0] ar, br; reg [47:0] sr;
  wire [63:0] sum = ar + br;
  integer i;
  reg [15:0] f;
  always @* for (i = 0; i < 16; i = i + 1) f[i] = ^(sr[i +: 24]) ^ (&sr[(i*2) +: 8]);
  always @(posedge clock) begin
    ar <= a; br <= b; sr <= s;
    slow <= (sum[63:32] == sum[31:0]) ^ (ar[5:0] == br[5:0]);
    o <= f;
  end
endmodule
";

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn design(dir: &Path, top: &str, text: &str) -> PathBuf {
    let v = dir.join(format!("{top}.v"));
    std::fs::write(&v, text).unwrap();
    v
}

#[test]
fn a_deliberately_deep_path_is_reported_and_rejected() {
    let dir = scratch("timing-deep");
    let v = design(&dir, "deep", DEEP);
    let out = Command::new(env!("CARGO_BIN_EXE_nanet-timing"))
        .args(["--verilog", v.to_str().unwrap(), "--top", "deep", "--check"])
        .args(["--clock", "clock=250:5", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("deepest path, 7 levels"), "{stdout}");
    assert!(stdout.contains("OVER BUDGET: 32 endpoints"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("timing.json")).unwrap()).unwrap();
    let clock = &json["designs"][0]["domains"]["clock"];
    assert_eq!(clock["max_levels"], 7);
    assert_eq!(clock["endpoints_over_budget"], 32);
    assert_eq!(json["passes"], false);
    // The estimate: 13.5 ns on a Cyclone V, about 150 MHz on a Stratix V: short of 250.
    assert!(clock["fmax_mhz"].as_f64().unwrap() < 250.0, "{clock}");
}

#[test]
fn a_shallow_design_passes() {
    let dir = scratch("timing-shallow");
    let netlist = synthesize(&dir, SHALLOW, "shallow", Mapping::Depth)
        .unwrap()
        .netlist;
    let budgets = [ClockBudget::new("clock", 250.0, 5)];
    let r = timing::analyze_netlist(&netlist, Some("shallow"), &budgets, ROUTE_PS, &[]).unwrap();
    assert!(r.passes(), "{}", r.text(true));
    let g = r
        .groups
        .iter()
        .find(|g| g.kind == PathKind::Within("clock".into()))
        .unwrap();
    assert_eq!(g.max_levels, 1);
    // 64 input bits into r0 and r1, 32 sum bits into q.
    assert_eq!(g.endpoints, 32);
}

/// The delays of `cells` are those of the specify blocks for Cyclone V in the installed yosys.
#[test]
fn cell_delays_are_those_of_yosys_cell_library() {
    // yosys finds its share folder beside its binary, as `../share/yosys`.
    let which = Command::new("sh")
        .args(["-c", "command -v yosys"])
        .output()
        .unwrap();
    let yosys = std::fs::canonicalize(String::from_utf8(which.stdout).unwrap().trim())
        .expect("yosys (installed by `make tools`)");
    let lib = yosys
        .parent()
        .unwrap()
        .join("../share/yosys/intel_alm/common");
    let mut published = vec![];
    let mut clock_to_out = vec![];
    for file in ["alm_sim.v", "mem_sim.v", "dff_sim.v"] {
        let text = std::fs::read_to_string(lib.join(file)).unwrap();
        let mut module = "";
        let mut cyclone = false;
        for line in text.lines() {
            let l = line.trim();
            if let Some(rest) = l.strip_prefix("module ") {
                module = rest.split(['(', ' ']).next().unwrap();
            } else if l.starts_with("`ifdef") {
                cyclone = l.contains("cyclonev");
            } else if l.starts_with("`endif") {
                cyclone = false;
            } else if cyclone && l.contains("posedge") && l.contains("=>") {
                // if (...) (posedge CLK => (Q : DATAIN)) = 731;
                let (arc, ps) = specify_arc(l);
                let data = arc.rsplit_once(':').unwrap().1.trim_end_matches([')', ' ']);
                clock_to_out.push((module.to_string(), data.trim().to_string(), ps));
            } else if cyclone && l.starts_with('(') && l.contains("=>") {
                // (A => Q) = 605;  // a comment
                let (arc, ps) = specify_arc(l.split("//").next().unwrap());
                let arc = arc.trim().trim_start_matches('(').trim_end_matches(')');
                let (from, to) = arc.split_once("=>").unwrap();
                published.push((
                    module.to_string(),
                    from.trim().to_string(),
                    to.trim().to_string(),
                    ps,
                ));
            }
        }
    }
    // The registers' clock-to-output delays: the flip-flop's data path, the M10K's read port.
    assert!(
        clock_to_out.contains(&("MISTRAL_FF".into(), "DATAIN".into(), cells::FF_CLK_TO_Q)),
        "{clock_to_out:?}"
    );
    assert!(
        clock_to_out.contains(&(
            "MISTRAL_M10K".into(),
            "A1DATA".into(),
            cells::M10K_CLK_TO_DATA
        )),
        "{clock_to_out:?}"
    );
    let ours: Vec<(String, String, String, u32)> = cells::table()
        .into_iter()
        .map(|(m, f, t, ps)| (m.to_string(), f.to_string(), t.to_string(), ps))
        .collect();
    assert!(!published.is_empty());
    for arc in &ours {
        assert!(
            published.contains(arc),
            "{arc:?} is not in yosys's {}",
            lib.display()
        );
    }
    let modules: Vec<&String> = ours.iter().map(|a| &a.0).collect();
    for arc in published.iter().filter(|a| modules.contains(&&a.0)) {
        assert!(ours.contains(arc), "yosys has {arc:?}, the walk does not");
    }
}

/// A specify line `<arc> = <ps>;` split into its arc and its delay.
fn specify_arc(line: &str) -> (&str, u32) {
    let (arc, ps) = line.rsplit_once('=').unwrap();
    let ps = ps
        .trim()
        .trim_end_matches(';')
        .parse()
        .unwrap_or_else(|_| panic!("{line}"));
    (arc, ps)
}

/// The timing mapping keeps each path at its own least depth; the area mapping deepens paths up
/// to the slowest one's delay (`nanet_board::synth`, "Two mappings").
#[test]
fn the_timing_mapping_does_not_deepen_paths_up_to_the_slowest() {
    let dir = scratch("timing-padded");
    let budgets = [ClockBudget::new("clock", 250.0, 3)];
    let deeper_than_3 = |mapping| {
        let netlist = synthesize(&dir, PADDED, "padded", mapping).unwrap().netlist;
        let r = timing::analyze_netlist(&netlist, Some("padded"), &budgets, ROUTE_PS, &[]).unwrap();
        let g = r
            .groups
            .into_iter()
            .find(|g| g.kind == PathKind::Within("clock".into()))
            .unwrap();
        // `slow` and `o`, from registers.
        assert_eq!(g.endpoints, 17);
        g.histogram.range(4..).map(|(_, n)| n).sum::<usize>()
    };
    let (area, depth) = (deeper_than_3(Mapping::Area), deeper_than_3(Mapping::Depth));
    // Measured: 10 endpoints over 3 levels with the area mapping, 3 with the timing mapping.
    assert!(
        depth + 4 <= area,
        "timing mapping: {depth} endpoints over 3 levels, area: {area}"
    );
}
