#!/usr/bin/env bash
# Benchmark: rho's in-process grep and find against ripgrep and fd, process against process.
#
# What it does:
#   1. Builds the `rho-tool-bench` example (crates/rho-tools/examples/rho_tool_bench.rs) in
#      release mode: a binary that runs one rho tool call and exits.
#   2. Generates a deterministic tree of ~50,000 files (nested directories, mixed sizes, some
#      files under .gitignore'd paths) in a temporary directory, unless BENCH_TREE names an
#      existing one.
#   3. Installs ripgrep, fd-find and hyperfine from Debian's packages when missing
#      (`apt-get install -y ripgrep fd-find hyperfine`); a tool that cannot be installed is
#      skipped with a message.
#   4. Times, on the same tree with the same ignore rules (.gitignore applies outside a git
#      repository in rho; rg gets --no-require-git, fd the .gitignore files as ignore files):
#        grep literal  rho grep {literal:true}        vs  rg --json --hidden --fixed-strings
#        grep regex    rho grep (regex)               vs  rg --json --hidden
#        find          rho find '*.rs'                vs  fdfind --glob --hidden --ignore-file <each .gitignore>
#      using hyperfine (warmup 2, 10 runs) or, without it, the median of 10 timed runs.
#   5. Prints a table of median wall times and the rho/reference ratio. Target: literal grep
#      within 1.5x of rg.
#
# Usage: bench/tools/run.sh            (env: BENCH_TREE=<dir> reuses a tree, RUNS=<n>,
#                                        CARGO_TARGET_DIR as usual, KEEP_TREE=1 keeps it)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
RUNS="${RUNS:-10}"
NEEDLE="NEEDLE_LITERAL_XYZ"

echo "== building rho-tool-bench (release)"
(cd "$ROOT" && cargo build --release -q -p rho-tools --example rho-tool-bench)
RHO="$TARGET_DIR/release/examples/rho-tool-bench"

if [[ -n "${BENCH_TREE:-}" && -d "${BENCH_TREE}" ]]; then
  TREE="$BENCH_TREE"
  echo "== reusing tree $TREE"
else
  TREE="$(mktemp -d "${TMPDIR:-/tmp}/rho-bench-tree.XXXXXX")"
  if [[ -z "${KEEP_TREE:-}" ]]; then
    trap 'rm -rf "$TREE"' EXIT
  fi
  echo "== generating tree in $TREE"
  python3 - "$TREE" "$NEEDLE" <<'PY'
import os, random, sys
root, needle = sys.argv[1], sys.argv[2]
words = ("alpha beta gamma delta epsilon zeta theta lambda sigma omega value result "
         "config handler request response buffer stream token parser render update "
         "index cache session model agent tool error retry limit").split()
exts = [".rs", ".ts", ".py", ".md", ".txt", ".json"]
rng = random.Random(12345)  # Mersenne Twister: the same tree on every Python 3
def rnd():
    return int(rng.random() * 2**31)
count = 0
for top in range(50):
    tdir = os.path.join(root, f"pkg{top:02d}")
    os.makedirs(tdir, exist_ok=True)
    with open(os.path.join(tdir, ".gitignore"), "w") as f:
        f.write("build/\n*.tmp\n")
    for sub in range(10):
        # The last subdirectory of each package is a build/ output dir (ignored).
        sdir = os.path.join(tdir, "build" if sub == 9 else f"mod{sub}", f"part{sub}")
        os.makedirs(sdir, exist_ok=True)
        for n in range(100):
            count += 1
            ext = ".tmp" if n % 50 == 49 else exts[rnd() % len(exts)]
            path = os.path.join(sdir, f"file{n:03d}{ext}")
            size = 64 * 1024 if rnd() % 100 == 0 else 256 + rnd() % 4096
            lines, total = [], 0
            while total < size:
                line = " ".join(words[rnd() % len(words)] for _ in range(4 + rnd() % 10))
                if count % 997 == 0 and not lines:
                    line += " " + needle
                if rnd() % 40 == 0:
                    line = f"fn {words[rnd() % len(words)]}_handler() {{}}"
                lines.append(line)
                total += len(line) + 1
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
print(f"{count} files")
PY
fi
du -sh "$TREE" | awk '{print "== tree size " $1}'

need() { # need <binary> <debian package>
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "== installing $2"
    (apt-get install -y -q "$2" >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "$2" >/dev/null 2>&1; }) || true
  fi
  command -v "$1" >/dev/null 2>&1
}
HAVE_RG=0; HAVE_FD=0; HAVE_HF=0
need rg ripgrep && HAVE_RG=1 || echo "!! ripgrep unavailable: grep comparison skipped"
need fdfind fd-find && HAVE_FD=1 || echo "!! fd unavailable: find comparison skipped"
need hyperfine hyperfine && HAVE_HF=1 || echo "!! hyperfine unavailable: using median of $RUNS timed runs"

# median_ms <command...>: median wall time in milliseconds over $RUNS runs (after 2 warmups).
median_ms() {
  if [[ $HAVE_HF == 1 ]]; then
    local json
    json="$(mktemp)"
    hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$json" "$(printf '%q ' "$@")" >/dev/null 2>&1 \
      || hyperfine --warmup 2 --runs "$RUNS" --export-json "$json" "$(printf '%q ' "$@")" >/dev/null 2>&1
    python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['results'][0]['median']*1000,1))" "$json"
    rm -f "$json"
  else
    local times=() i start end
    "$@" >/dev/null 2>&1 || true
    "$@" >/dev/null 2>&1 || true
    for ((i = 0; i < RUNS; i++)); do
      start=$(date +%s%N); "$@" >/dev/null 2>&1 || true; end=$(date +%s%N)
      times+=($(((end - start) / 1000)))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f\n", m/1000}'
  fi
}

# fd has no --no-require-git before version 9: like the reference, pass every .gitignore as an
# ignore file so the same files are excluded outside a git repository.
FD_IGNORE=()
while IFS= read -r f; do FD_IGNORE+=(--ignore-file "$f"); done < <(find "$TREE" -name .gitignore)

# Sanity: the tools agree on what they find.
if [[ $HAVE_RG == 1 ]]; then
  rho_hits=$("$RHO" grep "$TREE" "{\"pattern\":\"$NEEDLE\",\"literal\":true,\"limit\":100000}" 2>&1 | awk '{print $2}')
  rg_hits=$(rg --no-require-git --hidden --fixed-strings -c "$NEEDLE" "$TREE" | awk -F: '{s+=$NF} END {print s+0}')
  echo "== literal matches: rho $rho_hits lines, rg $rg_hits"
fi
if [[ $HAVE_FD == 1 ]]; then
  rho_files=$("$RHO" find "$TREE" '{"pattern":"*.rs","limit":1000000}' 2>&1 | awk '{print $2}')
  fd_files=$(fdfind "${FD_IGNORE[@]}" --glob --hidden '*.rs' "$TREE" | wc -l)
  echo "== *.rs files: rho $rho_files, fd $fd_files"
fi

rows=()
row() { # row <name> <rho ms> <ref name> <ref ms>
  local ratio="-"
  if [[ "$4" != "-" ]]; then ratio=$(awk -v a="$2" -v b="$4" 'BEGIN {printf "%.2fx", a / b}'); fi
  rows+=("$(printf '%-14s %10s ms   %-8s %10s ms   %8s' "$1" "$2" "$3" "$4" "$ratio")")
}

echo "== timing ($RUNS runs each)"
rho_lit=$(median_ms "$RHO" grep "$TREE" "{\"pattern\":\"$NEEDLE\",\"literal\":true,\"limit\":100000}")
rg_lit="-"; [[ $HAVE_RG == 1 ]] && rg_lit=$(median_ms rg --json --line-number --color=never --hidden --no-require-git --fixed-strings "$NEEDLE" "$TREE")
row "grep literal" "$rho_lit" "rg" "$rg_lit"

rho_re=$(median_ms "$RHO" grep "$TREE" '{"pattern":"fn [a-z]+_handler","limit":100000}')
rg_re="-"; [[ $HAVE_RG == 1 ]] && rg_re=$(median_ms rg --json --line-number --color=never --hidden --no-require-git 'fn [a-z]+_handler' "$TREE")
row "grep regex" "$rho_re" "rg" "$rg_re"

rho_find=$(median_ms "$RHO" find "$TREE" '{"pattern":"*.rs","limit":1000000}')
fd_find="-"; [[ $HAVE_FD == 1 ]] && fd_find=$(median_ms fdfind "${FD_IGNORE[@]}" --glob --color=never --hidden '*.rs' "$TREE")
row "find *.rs" "$rho_find" "fd" "$fd_find"

echo
printf '%-14s %13s   %-8s %13s   %8s\n' "case" "rho (median)" "ref" "ref (median)" "rho/ref"
printf '%s\n' "${rows[@]}"
if [[ "$rg_lit" != "-" ]]; then
  awk -v a="$rho_lit" -v b="$rg_lit" 'BEGIN { r = a / b; printf "\nliteral grep target (<= 1.50x rg): %.2fx %s\n", r, (r <= 1.5 ? "MET" : "NOT MET") }'
fi
