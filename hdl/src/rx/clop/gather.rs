//! The CLOP engines' side towards the register file: the `ready` of the engine a command or a
//! release went to ([`ClopRoute`](crate::rx::clop::route::ClopRoute) sends them), the engines'
//! `busy` and `cfg_refused` ORed (commands go to one engine at a time), and their counter pulses
//! summed per counter into registers (`counts`, at most `P` each, a cycle later), with the
//! committed bytes (each pair of engines' sum registered, the two pairs added after).

use array_init::array_init;
use rust_hdl::prelude::*;

/// One engine's counter pulses (`ClopEngine`'s outputs of the same names; `committed_bytes` is
/// valid with `committed`).
#[derive(LogicInterface, Default)]
pub struct ClopPulsesSink {
    pub committed: Signal<In, Bit>,
    pub committed_bytes: Signal<In, Bits<16>>,
    pub drop_disabled: Signal<In, Bit>,
    pub drop_too_big: Signal<In, Bit>,
    pub drop_no_buffer: Signal<In, Bit>,
    pub drop_tlb_miss: Signal<In, Bit>,
    pub drop_bad: Signal<In, Bit>,
    pub bad_release: Signal<In, Bit>,
    pub cfg_refused: Signal<In, Bit>,
}

/// The engines' counts of a cycle, summed: each counter's increment (`RxCounter` of the same
/// name) and the committed payload bytes.
#[derive(LogicInterface, Default)]
#[join = "ClopCountsSink"]
pub struct ClopCountsSource {
    pub committed: Signal<Out, Bits<3>>,
    pub drop_disabled: Signal<Out, Bits<3>>,
    pub drop_too_big: Signal<Out, Bits<3>>,
    pub drop_no_buffer: Signal<Out, Bits<3>>,
    pub drop_tlb_miss: Signal<Out, Bits<3>>,
    pub drop_bad: Signal<Out, Bits<3>>,
    pub bad_release: Signal<Out, Bits<3>>,
    pub committed_bytes: Signal<Out, Bits<18>>,
}

/// The register file's end of [`ClopCountsSource`].
#[derive(LogicInterface, Default)]
#[join = "ClopCountsSource"]
pub struct ClopCountsSink {
    pub committed: Signal<In, Bits<3>>,
    pub drop_disabled: Signal<In, Bits<3>>,
    pub drop_too_big: Signal<In, Bits<3>>,
    pub drop_no_buffer: Signal<In, Bits<3>>,
    pub drop_tlb_miss: Signal<In, Bits<3>>,
    pub drop_bad: Signal<In, Bits<3>>,
    pub bad_release: Signal<In, Bits<3>>,
    pub committed_bytes: Signal<In, Bits<18>>,
}

/// See the module doc.
#[derive(LogicBlock)]
pub struct ClopGather<const P: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    /// The command's CLOP and its `ready`, from the engines' (`engine_cfg_ready`).
    pub cfg_clop: Signal<In, Bits<6>>,
    pub cfg_ready: Signal<Out, Bit>,
    pub engine_cfg_ready: [Signal<In, Bit>; P],
    /// The release on offer (`{clop, buf}`), its `ready` from the engines', and a release taken.
    pub rel_valid: Signal<In, Bit>,
    pub rel_data: Signal<In, Bits<14>>,
    pub rel_ready: Signal<Out, Bit>,
    pub engine_rel_ready: [Signal<In, Bit>; P],
    pub rel_taken: Signal<Out, Bit>,

    pub engine_busy: [Signal<In, Bit>; P],
    pub busy: Signal<Out, Bit>,
    pub pulses: [ClopPulsesSink; P],
    pub counts: ClopCountsSource,
    pub refused_now: Signal<Out, Bit>,

    /// The engine of the command's CLOP, and of the release's.
    cfg_to: Signal<Local, Bits<2>>,
    rel_to: Signal<Local, Bits<2>>,
    ports: Constant<Bits<3>>,
    engine_ids: [Constant<Bits<2>>; P],
    /// One engine's pulses, as the loop adds them (the loop index may not appear in `bit_cast`).
    one_committed: Signal<Local, Bit>,
    one_drop_disabled: Signal<Local, Bit>,
    one_drop_too_big: Signal<Local, Bit>,
    one_drop_no_buffer: Signal<Local, Bit>,
    one_drop_tlb_miss: Signal<Local, Bit>,
    one_drop_bad: Signal<Local, Bit>,
    one_bad_release: Signal<Local, Bit>,
    one_bytes: Signal<Local, Bits<16>>,
    /// The sums as the engines are added up, and registered.
    sum_committed: Signal<Local, Bits<3>>,
    sum_drop_disabled: Signal<Local, Bits<3>>,
    sum_drop_too_big: Signal<Local, Bits<3>>,
    sum_drop_no_buffer: Signal<Local, Bits<3>>,
    sum_drop_tlb_miss: Signal<Local, Bits<3>>,
    sum_drop_bad: Signal<Local, Bits<3>>,
    sum_bad_release: Signal<Local, Bits<3>>,
    sum_bytes_lo: Signal<Local, Bits<17>>,
    sum_bytes_hi: Signal<Local, Bits<17>>,
    committed: DFF<Bits<3>>,
    drop_disabled: DFF<Bits<3>>,
    drop_too_big: DFF<Bits<3>>,
    drop_no_buffer: DFF<Bits<3>>,
    drop_tlb_miss: DFF<Bits<3>>,
    drop_bad: DFF<Bits<3>>,
    bad_release: DFF<Bits<3>>,
    /// Committed bytes of engines 0 and 1, and of engines 2 and 3.
    bytes_lo: DFF<Bits<17>>,
    bytes_hi: DFF<Bits<17>>,
}

impl<const P: usize> Default for ClopGather<P> {
    fn default() -> Self {
        assert!((1..=4).contains(&P), "1 to 4 CLOP engines");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            cfg_clop: Default::default(),
            cfg_ready: Default::default(),
            engine_cfg_ready: array_init(|_| Default::default()),
            rel_valid: Default::default(),
            rel_data: Default::default(),
            rel_ready: Default::default(),
            engine_rel_ready: array_init(|_| Default::default()),
            rel_taken: Default::default(),
            engine_busy: array_init(|_| Default::default()),
            busy: Default::default(),
            pulses: array_init(|_| Default::default()),
            counts: Default::default(),
            refused_now: Default::default(),
            cfg_to: Default::default(),
            rel_to: Default::default(),
            one_committed: Default::default(),
            one_drop_disabled: Default::default(),
            one_drop_too_big: Default::default(),
            one_drop_no_buffer: Default::default(),
            one_drop_tlb_miss: Default::default(),
            one_drop_bad: Default::default(),
            one_bad_release: Default::default(),
            one_bytes: Default::default(),
            ports: Constant::new((P as u64).into()),
            engine_ids: array_init(|i| Constant::new((i as u64).into())),
            sum_committed: Default::default(),
            sum_drop_disabled: Default::default(),
            sum_drop_too_big: Default::default(),
            sum_drop_no_buffer: Default::default(),
            sum_drop_tlb_miss: Default::default(),
            sum_drop_bad: Default::default(),
            sum_bad_release: Default::default(),
            sum_bytes_lo: Default::default(),
            sum_bytes_hi: Default::default(),
            committed: Default::default(),
            drop_disabled: Default::default(),
            drop_too_big: Default::default(),
            drop_no_buffer: Default::default(),
            drop_tlb_miss: Default::default(),
            drop_bad: Default::default(),
            bad_release: Default::default(),
            bytes_lo: Default::default(),
            bytes_hi: Default::default(),
        }
    }
}

impl<const P: usize> Logic for ClopGather<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            committed,
            drop_disabled,
            drop_too_big,
            drop_no_buffer,
            drop_tlb_miss,
            drop_bad,
            bad_release,
            bytes_lo,
            bytes_hi
        );
        self.cfg_to.next = self.cfg_clop.val().get_bits::<2>(4);
        if bit_cast::<3, 2>(self.cfg_to.val()) >= self.ports.val() {
            self.cfg_to.next = 0.into();
        }
        self.rel_to.next = self.rel_data.val().get_bits::<2>(12);
        if bit_cast::<3, 2>(self.rel_to.val()) >= self.ports.val() {
            self.rel_to.next = 0.into();
        }
        self.cfg_ready.next = false;
        self.rel_ready.next = false;
        self.busy.next = false;
        self.refused_now.next = false;
        self.sum_committed.next = 0.into();
        self.sum_drop_disabled.next = 0.into();
        self.sum_drop_too_big.next = 0.into();
        self.sum_drop_no_buffer.next = 0.into();
        self.sum_drop_tlb_miss.next = 0.into();
        self.sum_drop_bad.next = 0.into();
        self.sum_bad_release.next = 0.into();
        self.sum_bytes_lo.next = 0.into();
        self.sum_bytes_hi.next = 0.into();
        for i in 0..P {
            if self.cfg_to.val() == self.engine_ids[i].val() {
                self.cfg_ready.next = self.engine_cfg_ready[i].val();
            }
            if self.rel_to.val() == self.engine_ids[i].val() {
                self.rel_ready.next = self.engine_rel_ready[i].val();
            }
            self.busy.next = self.busy.val() | self.engine_busy[i].val();
            self.refused_now.next = self.refused_now.val() | self.pulses[i].cfg_refused.val();
            self.one_committed.next = self.pulses[i].committed.val();
            self.sum_committed.next =
                self.sum_committed.val() + bit_cast::<3, 1>(self.one_committed.val().into());
            self.one_drop_disabled.next = self.pulses[i].drop_disabled.val();
            self.sum_drop_disabled.next = self.sum_drop_disabled.val()
                + bit_cast::<3, 1>(self.one_drop_disabled.val().into());
            self.one_drop_too_big.next = self.pulses[i].drop_too_big.val();
            self.sum_drop_too_big.next =
                self.sum_drop_too_big.val() + bit_cast::<3, 1>(self.one_drop_too_big.val().into());
            self.one_drop_no_buffer.next = self.pulses[i].drop_no_buffer.val();
            self.sum_drop_no_buffer.next = self.sum_drop_no_buffer.val()
                + bit_cast::<3, 1>(self.one_drop_no_buffer.val().into());
            self.one_drop_tlb_miss.next = self.pulses[i].drop_tlb_miss.val();
            self.sum_drop_tlb_miss.next = self.sum_drop_tlb_miss.val()
                + bit_cast::<3, 1>(self.one_drop_tlb_miss.val().into());
            self.one_drop_bad.next = self.pulses[i].drop_bad.val();
            self.sum_drop_bad.next =
                self.sum_drop_bad.val() + bit_cast::<3, 1>(self.one_drop_bad.val().into());
            self.one_bad_release.next = self.pulses[i].bad_release.val();
            self.sum_bad_release.next =
                self.sum_bad_release.val() + bit_cast::<3, 1>(self.one_bad_release.val().into());
            // (The bytes are valid only with `committed`.)
            self.one_bytes.next = 0.into();
            if self.pulses[i].committed.val() {
                self.one_bytes.next = self.pulses[i].committed_bytes.val();
            }
            if self.engine_ids[i].val().get_bit(1) {
                self.sum_bytes_hi.next =
                    self.sum_bytes_hi.val() + bit_cast::<17, 16>(self.one_bytes.val());
            } else {
                self.sum_bytes_lo.next =
                    self.sum_bytes_lo.val() + bit_cast::<17, 16>(self.one_bytes.val());
            }
        }
        self.rel_taken.next = self.rel_valid.val() & self.rel_ready.val();
        self.committed.d.next = self.sum_committed.val();
        self.counts.committed.next = self.committed.q.val();
        self.drop_disabled.d.next = self.sum_drop_disabled.val();
        self.counts.drop_disabled.next = self.drop_disabled.q.val();
        self.drop_too_big.d.next = self.sum_drop_too_big.val();
        self.counts.drop_too_big.next = self.drop_too_big.q.val();
        self.drop_no_buffer.d.next = self.sum_drop_no_buffer.val();
        self.counts.drop_no_buffer.next = self.drop_no_buffer.q.val();
        self.drop_tlb_miss.d.next = self.sum_drop_tlb_miss.val();
        self.counts.drop_tlb_miss.next = self.drop_tlb_miss.q.val();
        self.drop_bad.d.next = self.sum_drop_bad.val();
        self.counts.drop_bad.next = self.drop_bad.q.val();
        self.bad_release.d.next = self.sum_bad_release.val();
        self.counts.bad_release.next = self.bad_release.q.val();
        self.bytes_lo.d.next = self.sum_bytes_lo.val();
        self.bytes_hi.d.next = self.sum_bytes_hi.val();
        self.counts.committed_bytes.next =
            bit_cast::<18, 17>(self.bytes_lo.q.val()) + bit_cast::<18, 17>(self.bytes_hi.q.val());
        if self.reset.val() {
            self.committed.d.next = 0.into();
            self.drop_disabled.d.next = 0.into();
            self.drop_too_big.d.next = 0.into();
            self.drop_no_buffer.d.next = 0.into();
            self.drop_tlb_miss.d.next = 0.into();
            self.drop_bad.d.next = 0.into();
            self.bad_release.d.next = 0.into();
            self.bytes_lo.d.next = 0.into();
            self.bytes_hi.d.next = 0.into();
        }
    }
}
