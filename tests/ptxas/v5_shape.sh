#!/usr/bin/env bash
# v5_shape.sh FILE.ptx FILE.tls: the instruction profile of the compiled V5 kernel,
# one count per line, for a golden comparison. The K loops are unrolled in the
# IR (ir/unroll.c): a main loop of 4 copies and a remainder of up to 3 tested
# copies each. What each count must be:
#   wgmma m64n256k16   2 groups x (1 before the loop + 4 main + 3 remainder
#                      copies) x 4 k16 steps per 64-wide K tile = 64
#   wait_group 1 / 0   one per copy per group (14) / one per group (2)
#   cp.async.bulk.tensor  3 loads x (4 + 3) copies = 21
#   mbarrier.arrive    2 groups x (7 copies + the epilogue's) = 16, each
#                      predicated (@p: warp test and elect.sync, no branch)
#   try_wait .relaxed  the seed's sem="relaxed" waits: 7 + 1 (drain) in the
#                      producer, 2 x (1 + 7) in the consumers = 24
#   elect.sync         one per single-thread region / TMA issue (7 x 4 in the
#                      producer, 8 per consumer group) = 44
#   cvta.param         one per tensor map (2), in the prologue: none in a
#                      loop, where ptxas would reload the parameter base
#                      before every TMA copy
#   div/rem            none by a constant (emit_divmod.c), none by the block
#                      swizzle's run-time divisors: expressions of the
#                      parameters, divided through hidden multipliers
#                      (ir/magic.c)
#   .loc               for each primitive call of the .tls, how many of its
#                      lines have a `.loc` in the PTX (all of them must)
f=$1 tls=$2
count() { grep -cE "$1" "$f"; }
echo "wgmma.mma_async m64n256k16.f32.f16.f16: $(count 'wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.f16\.f16')"
echo "wgmma.fence: $(count 'wgmma\.fence\.sync\.aligned')"
echo "wgmma.commit_group: $(count 'wgmma\.commit_group\.sync\.aligned')"
echo "wgmma.wait_group 1: $(count 'wgmma\.wait_group\.sync\.aligned 1;')"
echo "wgmma.wait_group 0: $(count 'wgmma\.wait_group\.sync\.aligned 0;')"
echo "cp.async.bulk.tensor.2d load: $(count 'cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes')"
echo "mbarrier.arrive.expect_tx: $(count 'mbarrier\.arrive\.expect_tx\.shared::cta\.b64 _')"
echo "mbarrier.arrive: $(count 'mbarrier\.arrive\.shared::cta\.b64 _')"
echo "mbarrier.try_wait.parity.relaxed.cta: $(count 'mbarrier\.try_wait\.parity\.relaxed\.cta\.shared::cta\.b64')"
echo "mbarrier.init: $(count 'mbarrier\.init\.shared::cta\.b64')"
echo "elect.sync: $(count 'elect\.sync _\|%p[0-9]+, -1;')"
echo "predicated mbarrier.arrive: $(count '@%p[0-9]+ mbarrier\.arrive\.shared::cta\.b64 _')"
echo "cvta.param: $(count 'cvta\.param\.u64')"
echo "cvta.param after the first label: $(awk '/^\$L[0-9]+:/{l=1} l && /cvta\.param/' "$f" | wc -l)"
echo "div/rem by a constant: $(count '(div|rem)\.[su](32|64) [^,]+, [^,]+, -?[0-9]+;')"
echo "div/rem by a register: $(count '(div|rem)\.[su](32|64) [^,]+, [^,]+, %[a-z]+[0-9]*;')"
echo "cvt.rn.f16x2.f32: $(count 'cvt\.rn\.f16x2\.f32')"
echo ".target: $(grep -E '^\.target' "$f")"
echo ".maxntid: $(grep -E '^\.maxntid' "$f")"
locs=$(grep -oE '^\s*\.loc 1 [0-9]+' "$f" | awk '{print $3}' | sort -nu)
for call in wgmma.mma wgmma.wait_group tma.global_to_shared mbarrier.wait mbarrier.arrive store_global cast; do
  lines=$(grep -nF "self.$call(" "$tls" | cut -d: -f1)
  n=0 mapped=0
  for l in $lines; do
    n=$((n + 1))
    if echo "$locs" | grep -qx "$l"; then mapped=$((mapped + 1)); fi
  done
  echo ".loc for self.$call(: $mapped of $n lines"
done
