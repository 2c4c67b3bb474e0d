//! The TLP merge: the read engine's memory reads (`a`, one beat each) and the memory writes (`b`,
//! one to many beats) from gap-free TLP sources with random pauses, onto one TLP source whose
//! ready drops at random, in phases where both sources are busy and where they are sparse.
//! Checks: no beat of one TLP between beats of another; inside a TLP every cycle offers a beat
//! (the sources are gap-free, so must the merge be); each source's TLPs arrive whole and in order;
//! at a TLP boundary a waiting read goes first, and a source is only ever told ready for the beat
//! that leaves. At 128 and 256 bits, on the rust-hdl model and its Verilog in lockstep.

use nanet_hdl::pcie::tlp_merge::TlpMerge;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{Design, DesignSim, EngineKind};
use nanet_sim::world::tlp::{Beat, BeatData, Pins, Tlp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::tx_arbiter::Source;

#[derive(Clone, Default)]
pub struct MIn<T> {
    reset: bool,
    a: Pins<T>,
    a_valid: bool,
    b: Pins<T>,
    b_valid: bool,
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct MOut<T> {
    a_ready: bool,
    b_ready: bool,
    out: Pins<T>,
    out_valid: bool,
}

macro_rules! merge_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for TlpMerge<$bits>, top $top, inputs MIn<$data>, outputs MOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, a.data => a.data, a.sop => a.sop, a.eop => a.eop,
                a.empty => a.empty, a_valid => a.valid, b.data => b.data, b.sop => b.sop,
                b.eop => b.eop, b.empty => b.empty, b_valid => b.valid, out_ready => out.ready,
            }
            outputs {
                a_ready => a.ready, b_ready => b.ready, out.data => out.data, out.sop => out.sop,
                out.eop => out.eop, out.empty => out.empty, out_valid => out.valid,
            }
        }
    };
}
merge_design!(Merge128, 128, u128, "nanet_tlp_merge");
merge_design!(Merge256, 256, [u64; 4], "nanet_tlp_merge_256");

#[test]
fn reads_and_writes_merge_whole_and_in_order_reads_first() {
    merge::<Merge128, u128>();
}

#[test]
fn reads_and_writes_merge_whole_and_in_order_reads_first_at_256_bits() {
    merge::<Merge256, [u64; 4]>();
}

fn merge<D: Design<In = MIn<T>, Out = MOut<T>>, T: BeatData + Copy>() {
    let v = T::VARIANT;
    let mut rng = StdRng::seed_from_u64(41);
    // Reads below and above 4 GiB (3- and 4-dword headers); writes of 1 to 64 dwords.
    let reads: Vec<Tlp> = (0..600u64)
        .map(|i| Tlp::MemRead {
            requester: 0x0300,
            tag: i as u8,
            addr: 0x1_0000_0000 * (i % 2) + 0x8000_0000 + i * 64,
            len_dw: 16,
            first_be: 0xF,
            last_be: 0xF,
        })
        .collect();
    let writes: Vec<Tlp> = (0..400u64)
        .map(|i| Tlp::MemWrite {
            requester: 0x0300,
            tag: 0,
            addr: 0x1_0000_0000 * (i % 3 / 2) + 0x9000_0000 + i * 256 + 4 * (i % 2),
            first_be: 0xF,
            last_be: 0xF,
            data: (0..rng.gen_range(1..=64))
                .map(|k| (i as u32) << 16 | k)
                .collect(),
        })
        .collect();
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let (mut a_src, mut b_src) = (Source::new(&reads, v), Source::new(&writes, v));
    let mut current: Vec<Beat> = vec![];
    let (mut got_reads, mut got_writes) = (vec![], vec![]);
    // Reads that left while a write waited (the priority rule was exercised).
    let mut contested = 0u32;
    let mut cycle = 0u32;
    while a_src.done < reads.len() || b_src.done < writes.len() {
        // Phases of busy sources and sparse ones (a source idles a cycle now and then).
        let sparse = (cycle / 1500) % 2 == 1;
        let a = a_src.offer().filter(|_| !(sparse && rng.gen_bool(0.8)));
        let b = b_src
            .offer()
            .filter(|_| !(b_src.at_start() && sparse && rng.gen_bool(0.5)));
        let i = &mut d.inputs;
        i.a_valid = a.is_some();
        i.a = Pins::from(a.unwrap_or_default());
        i.b_valid = b.is_some();
        i.b = Pins::from(b.unwrap_or_default());
        i.out_ready = rng.gen_bool(if (cycle / 700).is_multiple_of(2) {
            0.5
        } else {
            0.9
        });
        let o = d.settle().clone();
        let a_moved = d.inputs.a_valid && o.a_ready;
        let b_moved = d.inputs.b_valid && o.b_ready;
        assert!(
            !(o.a_ready && o.b_ready),
            "cycle {cycle}: both sources ready"
        );
        let out_moved = o.out_valid && d.inputs.out_ready;
        assert_eq!(
            a_moved || b_moved,
            out_moved,
            "cycle {cycle}: a source's beat taken without leaving, or the other way round"
        );
        if a_moved && b.is_some() {
            contested += 1;
        }
        if current.is_empty() && a.is_some() {
            assert!(
                o.out_valid && o.out == d.inputs.a,
                "cycle {cycle}: a waiting read not first at a boundary"
            );
        }
        if !current.is_empty() {
            assert!(o.out_valid, "cycle {cycle}: a gap inside a TLP");
        }
        if out_moved {
            let beat = Beat::from(o.out);
            assert_eq!(
                beat.sop,
                current.is_empty(),
                "cycle {cycle}: TLPs interleave"
            );
            let want = if a_moved { d.inputs.a } else { d.inputs.b };
            assert_eq!(o.out, want, "cycle {cycle}: the beat is not the one taken");
            current.push(beat);
            if beat.eop {
                if a_moved {
                    got_reads.push(std::mem::take(&mut current));
                } else {
                    got_writes.push(std::mem::take(&mut current));
                }
            }
        }
        a_src.step(a_moved, &mut rng);
        b_src.step(b_moved, &mut rng);
        d.tick(clk);
        cycle += 1;
        assert!(
            cycle < 200_000,
            "merge wedged: {} reads, {} writes",
            a_src.done,
            b_src.done
        );
    }
    let want = |t: &[Tlp]| t.iter().map(|t| t.to_beats(v)).collect::<Vec<_>>();
    assert_eq!(got_reads, want(&reads), "reads whole and in order");
    assert_eq!(got_writes, want(&writes), "writes whole and in order");
    assert!(
        contested > 100,
        "only {contested} reads left while a write waited"
    );
}
