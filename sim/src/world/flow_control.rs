//! PCIe flow control as a link partner's receiver keeps it (PCIe 2.0, 2.6): per TLP class
//! (posted, non-posted, completion) a buffer of header and data credits (a data credit is 16
//! bytes), advertised to the transmitter as modulo counters (credit limits: 8 bits for headers,
//! 12 for data) that grow as the receiver frees buffer space, after a release delay (the time the
//! receiver takes to pass a TLP on, and the UpdateFC DLLP's trip).
//!
//! A TLP that arrives without room in its buffer is an overflow, a fatal error on a real link:
//! [`FlowControl::receive`] reports it. The card's Hard IP shows the limits on its `tx_cred_*`
//! outputs ([`FlowControl::limits`]); a class with no buffer size is infinite.

use std::collections::VecDeque;

use crate::world::tlp::length_dwords;

/// The flow-control classes, in the Hard IP's order of `tx_cred_fcinfinite` (from the top bit
/// pair down: posted, non-posted, completion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FcClass {
    Posted = 0,
    NonPosted = 1,
    Completion = 2,
}

impl FcClass {
    /// The class of a TLP from its first header dword, and the data credits it needs; `None`
    /// for a TLP type flow control does not know.
    pub fn of(dw0: u32) -> Option<(FcClass, u32)> {
        let (fmt, kind) = (dw0 >> 29, (dw0 >> 24) & 0x1F);
        let has_data = fmt & 0b010 != 0;
        let data = if has_data {
            length_dwords(dw0).div_ceil(4) as u32
        } else {
            0
        };
        let class = match kind {
            0x00 | 0x01 if has_data => FcClass::Posted,
            0x00 | 0x01 => FcClass::NonPosted,
            0x0A | 0x0B => FcClass::Completion,
            k if k & 0x18 == 0x10 => FcClass::Posted,
            _ => return None,
        };
        Some((class, data))
    }

    fn name(self) -> &'static str {
        ["posted", "non-posted", "completion"][self as usize]
    }
}

/// One class's receive buffer: header and data credits, `None` for infinite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditPool {
    pub hdr: Option<u32>,
    pub data: Option<u32>,
}

impl CreditPool {
    pub const INFINITE: CreditPool = CreditPool {
        hdr: None,
        data: None,
    };
    pub fn finite(hdr: u32, data: u32) -> Self {
        // The protocol allows at most half of each counter's range outstanding.
        assert!((1..=127).contains(&hdr) && (1..=2047).contains(&data));
        Self {
            hdr: Some(hdr),
            data: Some(data),
        }
    }
}

/// What the Hard IP reports to the card, class by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditLimits {
    pub hdr: [u8; 3],
    pub data: [u16; 3],
    /// `tx_cred_fcinfinite`: bit 5 posted headers, 4 posted data, 3 and 2 non-posted, 1 and 0
    /// completions.
    pub infinite: u8,
}

#[derive(Clone, Debug)]
struct ClassState {
    pool: CreditPool,
    hdr_in_use: u32,
    data_in_use: u32,
    /// Advertised limits: the pool plus everything freed so far, modulo the counter widths.
    hdr_limit: u8,
    data_limit: u16,
    /// Credits to free at a cycle: (cycle, headers, data).
    releases: VecDeque<(u64, u32, u32)>,
}

#[derive(Clone, Debug)]
pub struct FlowControl {
    classes: [ClassState; 3],
    /// Cycles from a TLP's arrival to its credits coming back in the limits.
    pub release_delay: u64,
    /// Most of each class's buffer in use at once: (headers, data).
    pub high_water: [(u32, u32); 3],
}

impl FlowControl {
    /// Buffers for posted, non-posted and completion TLPs.
    pub fn new(pools: [CreditPool; 3], release_delay: u64) -> Self {
        let classes = pools.map(|pool| ClassState {
            pool,
            hdr_in_use: 0,
            data_in_use: 0,
            hdr_limit: pool.hdr.unwrap_or(0) as u8,
            data_limit: pool.data.unwrap_or(0) as u16 & 0xFFF,
            releases: VecDeque::new(),
        });
        Self {
            classes,
            release_delay,
            high_water: [(0, 0); 3],
        }
    }

    /// A real x8 root port's credits, as Intel's Xeon C5500/C3500 datasheet (323103-001, Table 76)
    /// gives its integrated I/O's initial advertisement: 32 posted headers and 160 posted data
    /// credits (2.5 KiB: ten max-size writes), 36 non-posted headers and 4 data credits, infinite
    /// completions (required of a root complex without peer-to-peer). The same table serves both
    /// variants (it is the x8 port's; credits do not depend on the link's speed). Freed 40 core
    /// cycles (160 ns) after arrival: the port returns credits as its transaction layer accepts a
    /// TLP and waits 30-70 of its cycles before the UpdateFC (section 2.6.22.1); the DLLP's trip
    /// and the Hard IP's `tx_cred` update are in the same figure (an estimate, not a datasheet
    /// value). At Gen3 x8, 160 data credits last 355 ns of writes and 36 reads' headers carry
    /// 225 M reads/s: neither limits the card, and every TLP is accounted.
    pub fn root_port() -> Self {
        Self::new(
            [
                CreditPool::finite(32, 160),
                CreditPool::finite(36, 4),
                CreditPool::INFINITE,
            ],
            40,
        )
    }

    /// A link partner short of buffers and slow to free them: two posted writes of 256 bytes,
    /// two reads, a few completions, freed 150 cycles after arrival.
    pub fn scarce() -> Self {
        Self::new(
            [
                CreditPool::finite(2, 32),
                CreditPool::finite(2, 1),
                CreditPool::finite(4, 16),
            ],
            150,
        )
    }

    /// Whether `class`'s buffer is finite (its freed credits go back in UpdateFC DLLPs).
    pub fn is_finite(&self, class: FcClass) -> bool {
        let pool = self.classes[class as usize].pool;
        pool.hdr.is_some() || pool.data.is_some()
    }

    pub fn limits(&self) -> CreditLimits {
        let mut l = CreditLimits::default();
        for (i, c) in self.classes.iter().enumerate() {
            l.hdr[i] = c.hdr_limit;
            l.data[i] = c.data_limit;
            let shift = 4 - 2 * i;
            l.infinite |= (c.pool.hdr.is_none() as u8) << (shift + 1);
            l.infinite |= (c.pool.data.is_none() as u8) << shift;
        }
        l
    }

    /// Whether `class` has room for `hdrs` TLPs with `data` credits in all now.
    pub fn has_room(&self, class: FcClass, hdrs: u32, data: u32) -> bool {
        let c = &self.classes[class as usize];
        c.pool.hdr.is_none_or(|h| c.hdr_in_use + hdrs <= h)
            && c.pool.data.is_none_or(|d| c.data_in_use + data <= d)
    }

    /// A TLP of `class` with `data` credits arrived in `cycle`; an error if it overflows the
    /// buffer (it is taken anyway, so the test reports it and goes on).
    pub fn receive(&mut self, class: FcClass, data: u32, cycle: u64) -> Result<(), String> {
        let room = self.has_room(class, 1, data);
        let c = &mut self.classes[class as usize];
        let before = (c.hdr_in_use, c.data_in_use);
        c.hdr_in_use += 1;
        c.data_in_use += data;
        c.releases.push_back((cycle + self.release_delay, 1, data));
        let hw = &mut self.high_water[class as usize];
        *hw = (hw.0.max(c.hdr_in_use), hw.1.max(c.data_in_use));
        if room {
            Ok(())
        } else {
            Err(format!(
                "{} TLP with {data} data credits overflows the receive buffer ({} of {:?} \
                 headers, {} of {:?} data credits in use)",
                class.name(),
                before.0,
                c.pool.hdr,
                before.1,
                c.pool.data
            ))
        }
    }

    /// Frees what is due by `cycle` and advertises it.
    pub fn tick(&mut self, cycle: u64) {
        for c in &mut self.classes {
            while c.releases.front().is_some_and(|r| r.0 <= cycle) {
                let (_, h, d) = c.releases.pop_front().unwrap();
                c.hdr_in_use -= h;
                c.data_in_use -= d;
                c.hdr_limit = c.hdr_limit.wrapping_add(h as u8);
                c.data_limit = (c.data_limit + d as u16) & 0xFFF;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_data_credits_of_tlps() {
        // MWr 3DW of 64 dwords, MWr 4DW of 1024 (length 0), MRd, CplD of 3 dwords, Cpl, Msg.
        assert_eq!(FcClass::of(0x4000_0040), Some((FcClass::Posted, 16)));
        assert_eq!(FcClass::of(0x6000_0000), Some((FcClass::Posted, 256)));
        assert_eq!(FcClass::of(0x0000_0010), Some((FcClass::NonPosted, 0)));
        assert_eq!(FcClass::of(0x4A00_0003), Some((FcClass::Completion, 1)));
        assert_eq!(FcClass::of(0x0A00_0000), Some((FcClass::Completion, 0)));
        assert_eq!(FcClass::of(0x3000_0000), Some((FcClass::Posted, 0)));
        assert_eq!(FcClass::of(0x0400_0001), None);
    }

    #[test]
    fn limits_grow_by_what_is_freed_and_wrap() {
        let mut fc = FlowControl::new(
            [
                CreditPool::finite(2, 20),
                CreditPool::INFINITE,
                CreditPool::INFINITE,
            ],
            10,
        );
        assert_eq!(fc.limits().hdr[0], 2);
        assert_eq!(fc.limits().infinite, 0b00_1111);
        fc.receive(FcClass::Posted, 16, 0).unwrap();
        assert!(!fc.has_room(FcClass::Posted, 1, 16));
        assert!(fc.receive(FcClass::Posted, 16, 1).is_err());
        fc.tick(10);
        assert_eq!((fc.limits().hdr[0], fc.limits().data[0]), (3, 36));
        // 300 more TLPs of 16 credits: the limits wrap at 256 and 4096.
        for i in 0..300 {
            fc.tick(100 + 20 * i);
            fc.receive(FcClass::Posted, 16, 100 + 20 * i).unwrap();
        }
        fc.tick(1_000_000);
        assert_eq!(fc.limits().hdr[0], ((2 + 302) % 256) as u8);
        assert_eq!(fc.limits().data[0], ((20 + 16 * 302) % 4096) as u16);
        assert!(fc.receive(FcClass::NonPosted, 0, 0).is_ok());
    }
}
