#!/usr/bin/env bash
# The ACP end-to-end check with the official TypeScript SDK's client (see run.mjs).
# Needs node (>= 18) and npm; installs @agentclientprotocol/sdk under bench/out/acp (ignored by
# git, never committed) from the npm registry on the first run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

out=bench/out/acp
sdk_version="${ACP_SDK_VERSION:-2}"
if [ ! -d "$out/node_modules/@agentclientprotocol/sdk" ]; then
  mkdir -p "$out"
  [ -f "$out/package.json" ] || echo '{"private": true}' >"$out/package.json"
  npm install --prefix "$out" --no-audit --no-fund "@agentclientprotocol/sdk@$sdk_version"
fi
cargo build -p rho-coding-agent -p rho-mock-llm --bins
node bench/acp/run.mjs
