#!/usr/bin/env bash
# Fuzz one dialect: fuzz/run.sh DIALECT [SECONDS]
# Seeds the corpus from conformance/DIALECT (each case prefixed with a chunking byte)
# and runs the target with the dialect's dictionary. Needs cargo-fuzz
# (`cargo install cargo-fuzz`); on a stable toolchain RUSTC_BOOTSTRAP=1 lets it use
# the sanitizer flags it needs.
set -euo pipefail
cd "$(dirname "$0")"
dialect=${1:?usage: fuzz/run.sh DIALECT [SECONDS]}
seconds=${2:-600}
corpus=corpus/$dialect
mkdir -p "$corpus"
i=0
for case in ../conformance/"$dialect"/*.txt; do
  [ -e "$case" ] || continue
  { printf "\\x$(printf %02x $((i % 256)))"; cat "$case"; } > "$corpus/seed-$(basename "$case" .txt)"
  i=$((i + 1))
done
export RUSTC_BOOTSTRAP=1
# Cargo target names cannot hold a dot: deepseek-v3.1's target is deepseek-v31.
exec cargo fuzz run "${dialect//./}" "$corpus" -- \
  -dict="dict/$dialect.dict" -max_total_time="$seconds" -max_len=4096 -timeout=10
