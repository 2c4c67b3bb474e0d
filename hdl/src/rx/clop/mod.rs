//! The CLOP engine (NaNet's TCL) and its parts: the engine that places packets into their CLOP's
//! buffers, closes buffers and reports them ([`engine`]); the store of every CLOP's configuration
//! and state, the only place that knows the RAM words' layout ([`store`]); the scanner that finds
//! buffers whose flush timeout has passed ([`timeout_scan`]).

pub mod engine;
pub mod store;
pub mod timeout_scan;
