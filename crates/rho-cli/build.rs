//! How the `rho` binary is linked on x86-64 Linux, for a small idle footprint.
//!
//! - Fixed address (non-PIE): a position-independent `rho` carries about 35,000 relative
//!   relocations that the loader applies at every start, reading the relocation table and
//!   dirtying every page of `.data.rel.ro`: 1.1 MB of an idle rho's memory for nothing, since
//!   rho is never loaded as a library. The code is still compiled position-independent (proc
//!   macros and build scripts need that); only the binary's final link is fixed.
//! - Start-up functions side by side (release builds linked by lld, rustc 1.90 and later):
//!   the kernel maps code 64 KB at a time around each page touched, so start-up code scattered
//!   over the text section made 6 MB of it resident. `symbol-order.txt` (written by
//!   `scripts/symbol-order/generate.py`) lists it for the linker to place first.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=symbol-order.txt");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    println!("cargo:rustc-link-arg-bin=rho=-no-pie");
    let lld_by_default = env::var("TARGET").as_deref() == Ok("x86_64-unknown-linux-gnu") && rustc_minor() >= 90;
    if lld_by_default && env::var("PROFILE").as_deref() == Ok("release") {
        let manifest_dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        let order = Path::new(&manifest_dir).join("symbol-order.txt");
        println!("cargo:rustc-link-arg-bin=rho=-Wl,--symbol-ordering-file={}", order.display());
        println!("cargo:rustc-link-arg-bin=rho=-Wl,--no-warn-symbol-ordering");
    }
}

/// The minor version of the compiler building rho (0 when it cannot be told).
fn rustc_minor() -> u32 {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| v.split_whitespace().nth(1)?.split('.').nth(1)?.parse().ok())
        .unwrap_or(0)
}
