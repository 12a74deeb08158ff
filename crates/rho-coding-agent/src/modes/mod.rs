//! The modes that need no crate of their own: RPC mode (the protocol over stdio) and print/JSON
//! mode, and the pieces every mode shares (the frame encoder, the one stdout writer, starting
//! extensions, termination signals). The interactive mode is rho-tui, ACP mode rho-acp.

mod bounded;
pub mod encoder;
pub mod extensions;
pub use extensions::registry_with_extensions;
pub mod file_args;
mod frames;
pub mod out_queue;
pub mod print;
pub mod rpc;
pub mod signals;
