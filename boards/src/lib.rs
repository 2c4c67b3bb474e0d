//! nanet board generation: a board description (`boards/<name>.toml`) and a port count in, a
//! Quartus-ready folder out (`build/<board>/`): the NIC and board glue from rust-hdl, the board
//! top with the vendor IP as black boxes, pin and timing constraints, the project script.

pub mod board;
pub mod ip;
pub mod netlist;
pub mod project;
pub mod quartus;
pub mod resources;
pub mod synth;
pub mod timing;
pub mod top;

pub use board::Board;
pub use project::Project;
