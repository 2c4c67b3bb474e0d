//! The CLOP engine (NaNet's TCL) and its parts: the engine that places packets into their CLOP's
//! buffers, closes buffers and reports them ([`engine`]).

pub mod engine;
