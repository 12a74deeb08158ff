//! The ways rho runs: RPC mode (the protocol over stdio), interactive mode (a person at a
//! terminal), print and ACP mode, and the pieces the modes share (the
//! frame encoder and the one stdout writer).

pub mod acp;
mod bounded;
pub mod encoder;
mod extensions;
pub use extensions::registry_with_extensions;
pub mod file_args;
mod frames;
pub mod interactive;
pub mod out_queue;
pub mod print;
pub mod rpc;
mod signals;
