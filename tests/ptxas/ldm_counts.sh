# ldm_counts.sh: counts over a PTX file $f that ldm_xor.sh and mma_shape.sh
# share (sourced). An address made by `xor.b32 %rX, %rB, IMM` counts as
# its base %rB among the ldmatrix address registers.
ldm_address_registers() {
  awk '/xor\.b32 %r[0-9]+, %r[0-9]+, [0-9]+;/ { d = $2; b = $3; sub(/,/, "", d); sub(/,/, "", b); base[d] = b }
    /ldmatrix/ { r = $0; sub(/.*\[/, "", r); sub(/[+\]].*/, "", r); print (r in base ? base[r] : r) }' "$f" |
    sort -u | wc -l
}
# xors by the instructions (lines matching $1) whose address they make,
# each xor once
by_xor() {
  awk -v use="$1" '/xor\.b32 %r[0-9]+, %r[0-9]+, [0-9]+;/ { d = $2; sub(/,/, "", d); x[d] = 1 }
    $0 ~ use { r = $0; sub(/.*\[/, "", r); sub(/[+\]].*/, "", r); if ((r in x) && !(r in seen)) { seen[r] = 1; n++ } }
    END { print n + 0 }' "$f"
}
