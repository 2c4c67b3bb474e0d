//! What every layer of the card speaks and builds on: the packet stream (64-bit beats, keep, last,
//! error) and its Avalon-ST adapters, single-clock and clock-crossing FIFOs, shallow multi-operand
//! adders, the Internet checksum pieces, the core cycle counter carried into the network domains,
//! the event record both engines report through, and the contract's bit positions as kernel
//! constants.
//!
//! Guarantees: a stream beat moves only on `valid && ready`; a clock-crossing FIFO passes data only
//! through its memory and Gray-coded pointers behind two-flop synchronizers.

pub mod adders;
pub mod async_fifo;
pub mod checksum;
pub mod datapath_width;
pub mod event_record;
pub mod fifo_output;
pub mod pair_fifo;
pub mod position;
pub mod round_robin;
pub mod skid_buffer;
pub mod staged_compare;
pub mod stream;
pub mod sync_fifo;
pub mod time_sync;
