#!/usr/bin/env bash
# The ACP end-to-end check with the official TypeScript SDK's client (see run.mjs), outside the
# test suite: builds rho and rho-mock-llm, installs the pinned SDK under target/acp-sdk (where
# the Rust test crates/rho-cli/tests/acp_sdk.rs looks for it) when missing, serves
# bench/acp/script.json and runs the client. Needs node (>= 18) and npm.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

sdk=target/acp-sdk
sdk_version=2.4.0
if [ ! -f "$sdk/node_modules/@agentclientprotocol/sdk/package.json" ]; then
  npm install --no-audit --no-fund --prefix "$sdk" "@agentclientprotocol/sdk@$sdk_version"
fi
cargo build -p rho-cli -p rho-mock-llm --bins
target_dir="${CARGO_TARGET_DIR:-target}"

work=$(mktemp -d)
trap 'kill "$mock" 2>/dev/null || true; rm -rf "$work"' EXIT
mkfifo "$work/url"
"$target_dir/debug/rho-mock-llm" --script bench/acp/script.json --record "$work/requests.jsonl" >"$work/url" &
mock=$!
read -r url <"$work/url"
RHO_BIN="$target_dir/debug/rho" MOCK_URL="$url" MOCK_RECORD="$work/requests.jsonl" ACP_SDK="$sdk" \
  node bench/acp/run.mjs
