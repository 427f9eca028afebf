#!/usr/bin/env bash
# Fuzz one dialect: fuzz/run.sh DIALECT [SECONDS]
# Seeds the corpus from conformance/DIALECT (each case prefixed with a chunking byte)
# and runs the target with the dialect's dictionary. `fuzz/run.sh grammar [SECONDS]`
# fuzzes grammar compilation instead: seeds are the shipped grammars, and each example
# family's grammar, a NUL byte and its description. Needs cargo-fuzz
# (`cargo install cargo-fuzz`); on a stable toolchain RUSTC_BOOTSTRAP=1 lets it use
# the sanitizer flags it needs.
set -euo pipefail
cd "$(dirname "$0")"
dialect=${1:?usage: fuzz/run.sh DIALECT [SECONDS]}
seconds=${2:-600}
corpus=corpus/$dialect
mkdir -p "$corpus"
i=0
max_len=4096
if [ "$dialect" = grammar ]; then
  max_len=16384
  for g in ../grammar/*.pest; do cp "$g" "$corpus/seed-$(basename "$g" .pest)"; done
  for d in ../grammar/*.family.json; do
    g=${d%.family.json}.pest
    { cat "$g"; printf '\0'; cat "$d"; } > "$corpus/seed-family-$(basename "$g" .pest)"
  done
fi
for case in ../conformance/"$dialect"/*.txt; do
  [ -e "$case" ] || continue
  { printf "\\x$(printf %02x $((i % 256)))"; cat "$case"; } > "$corpus/seed-$(basename "$case" .txt)"
  i=$((i + 1))
done
export RUSTC_BOOTSTRAP=1
# Cargo target names cannot hold a dot: deepseek-v3.1's target is deepseek-v31.
exec cargo fuzz run "${dialect//./}" "$corpus" -- \
  -dict="dict/$dialect.dict" -max_total_time="$seconds" -max_len="$max_len" -timeout=10
