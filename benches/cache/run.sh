#!/bin/bash
# `ogham run --backend cpu` of BFAST and STL: first run (compiles, fills the cache), second run
# (from the cache) and `--no-cache`, three times; whole-process time, when the first kernel
# starts (OGHAM_PROFILE) and the kernels' total. Run from the repository root after
# `cargo build --release`; data and outputs go to $WORK (default /tmp/ogham-cache-bench).
set -e
B=${OGHAM:-$PWD/target/release/ogham}
ROOT=$PWD
WORK=${WORK:-/tmp/ogham-cache-bench}
mkdir -p "$WORK"
cd "$WORK"
export OGHAM_CACHE_DIR=$WORK/cache
[ -f gen_b/out0.npy ] || "$B" run --backend cpu --entry bfast -o gen_b "$ROOT/benches/cache/gen.og" 1000i64 256i64
[ -f gen_s/out0.npy ] || "$B" run --backend cpu --entry stl -o gen_s "$ROOT/benches/cache/gen.og" 1000i64 828i64
BF="gen_b/out0.npy 23i64 23f64 2000f64 3i64 true 0.25f64 10i64 0.05f64 f64.nan"
ST="gen_s/out0.npy 23i64 7i64 0i64 1i64 45i64 1i64 5i64 25i64 1i64 3i64 2i64 1i64 true"
run() { # label program entry args...
  local label=$1 prog=$2 entry=$3; shift 3
  local t0=$(date +%s.%N)
  local prof=$(OGHAM_PROFILE=1 "$B" run --backend cpu $FLAGS --entry $entry -o out_$label $prog "$@" 2>&1 >/dev/null)
  local t1=$(date +%s.%N)
  local first=$(echo "$prof" | grep -o "first kernel starts [0-9.]*" | grep -o "[0-9.]*$")
  local kern=$(echo "$prof" | grep "ogham-profile: kernel" | grep -o "[0-9.]* ms" | awk '{s+=$1} END {printf "%.1f", s}')
  printf "%-14s process %7.1f ms  first kernel at %8s ms  kernels %s ms\n" "$label" "$(echo "($t1-$t0)*1000" | bc)" "$first" "$kern"
}
for rep in 1 2 3; do
  rm -rf "$OGHAM_CACHE_DIR"
  FLAGS= run bfast-first "$ROOT/programs/bfast.og" main $BF
  FLAGS= run bfast-second "$ROOT/programs/bfast.og" main $BF
  FLAGS=--no-cache run bfast-nocache "$ROOT/programs/bfast.og" main $BF
  FLAGS= run stl-first "$ROOT/programs/stl.og" main_f64 $ST
  FLAGS= run stl-second "$ROOT/programs/stl.og" main_f64 $ST
  FLAGS=--no-cache run stl-nocache "$ROOT/programs/stl.og" main_f64 $ST
done
