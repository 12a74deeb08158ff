//! pi's extensions in rho, driven through the real binary: rho starts its extension host (pi's
//! package from npm, as `.ci/run` installs it), loads pi's own example extensions and this
//! crate's fixtures, and a host of the RPC protocol (or print mode) sees what pi's users see.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod boundaries;
mod faults;
mod hooks;
mod interactive;
mod lifecycle;
mod mcp_servers;
mod packages;
mod providers;
mod session;
mod tools;
mod trust;
mod virtual_models;
