//! Plain values of a design's ports, independent of the engine that simulates it. Bus-functional
//! models and the link model drive and read these; each engine moves them into its own signals.

use rust_hdl::core::prelude::*;

/// A port value, moved as 64-bit words (one up to 64 bits, two up to 128, `W` for a `[u64; W]`
/// of a wider port; low word first).
pub trait PinValue: Copy + Default {
    fn to_word(self) -> u64;
    fn from_word(w: u64) -> Self;
    /// Appends the value's words at `words[*at..]`.
    fn put(self, words: &mut [u64], at: &mut usize) {
        words[*at] = self.to_word();
        *at += 1;
    }
    /// Takes the value's words from `words[*at..]`.
    fn take(words: &[u64], at: &mut usize) -> Self {
        *at += 1;
        Self::from_word(words[*at - 1])
    }
}

impl PinValue for bool {
    fn to_word(self) -> u64 {
        self as u64
    }
    fn from_word(w: u64) -> Self {
        w & 1 != 0
    }
}

macro_rules! pin_value_uint {
    ($($t:ty),*) => {$(
        impl PinValue for $t {
            fn to_word(self) -> u64 {
                self as u64
            }
            fn from_word(w: u64) -> Self {
                w as $t
            }
        }
    )*};
}
pin_value_uint!(u8, u16, u32, u64);

impl PinValue for u128 {
    fn to_word(self) -> u64 {
        self as u64
    }
    fn from_word(w: u64) -> Self {
        w as u128
    }
    fn put(self, words: &mut [u64], at: &mut usize) {
        words[*at] = self as u64;
        words[*at + 1] = (self >> 64) as u64;
        *at += 2;
    }
    fn take(words: &[u64], at: &mut usize) -> Self {
        *at += 2;
        words[*at - 2] as u128 | (words[*at - 1] as u128) << 64
    }
}

/// A value of a port wider than 128 bits (a 256-bit Avalon-ST beat: `[u64; 4]`), low word first.
impl<const W: usize> PinValue for [u64; W]
where
    [u64; W]: Default,
{
    fn to_word(self) -> u64 {
        self[0]
    }
    fn from_word(w: u64) -> Self {
        let mut v = Self::default();
        v[0] = w;
        v
    }
    fn put(self, words: &mut [u64], at: &mut usize) {
        words[*at..*at + W].copy_from_slice(&self);
        *at += W;
    }
    fn take(words: &[u64], at: &mut usize) -> Self {
        let mut v = Self::default();
        v.copy_from_slice(&words[*at..*at + W]);
        *at += W;
        v
    }
}

/// A rust-hdl signal value, as the words of [`PinValue`].
pub trait SignalWord: Synth {
    fn put(&self, words: &mut [u64], at: &mut usize);
    fn take(words: &[u64], at: &mut usize) -> Self;
}

impl SignalWord for bool {
    fn put(&self, words: &mut [u64], at: &mut usize) {
        words[*at] = *self as u64;
        *at += 1;
    }
    fn take(words: &[u64], at: &mut usize) -> Self {
        *at += 1;
        words[*at - 1] & 1 != 0
    }
}

impl<const N: usize> SignalWord for Bits<N> {
    fn put(&self, words: &mut [u64], at: &mut usize) {
        if N <= 64 {
            words[*at] = self.to_u64();
            *at += 1;
            return;
        }
        for k in 0..N.div_ceil(64) {
            words[*at + k] = self.get_bits::<64>(64 * k).to_u64();
        }
        *at += N.div_ceil(64);
    }
    fn take(words: &[u64], at: &mut usize) -> Self {
        if N <= 64 {
            *at += 1;
            return words[*at - 1].into();
        }
        let n = N.div_ceil(64);
        let mut v = Bits::<N>::default();
        for k in 0..n {
            let w: Bits<N> = words[*at + k].into();
            v = v | (w << (64 * k) as u64);
        }
        *at += n;
        v
    }
}

/// Altera 10G MAC client (Avalon-ST) driven into a design: everything but `ready`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct AvalonStIn {
    pub data: u64,
    pub valid: bool,
    pub startofpacket: bool,
    pub endofpacket: bool,
    pub empty: u8,
    pub error: bool,
}

/// Altera 10G MAC client (Avalon-ST) coming out of a design: everything but `ready`.
pub type AvalonStOut = AvalonStIn;

/// A packet stream driven into a design: everything but `ready`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamIn {
    pub data: u64,
    pub keep: u8,
    pub last: bool,
    pub error: bool,
    pub valid: bool,
}

/// A packet stream coming out of a design: everything but `ready`.
pub type StreamOut = StreamIn;
