#!/usr/bin/env bash
# divisor_shape.sh FILE.ptx: how a persistent tile schedule divides (golden,
# tests/ptxas/divisor_shape.expected). The tile index // and % the number of
# tile groups and the last group's width, expressions of the kernel's
# parameters: no div/rem (ir/magic.c, backend_ptx/emit_divmod.c), one
# mul.hi.u32 per division (the compiler's own strength reduction by
# constants uses the same instruction), a hidden `param __divN u64 divisor`
# per distinct divisor and its `divisor` line, the multipliers unpacked once
# at the kernel's start. The body is emitted twice (its staged result
# stores, in the tile loop, rest on run-time alignment): 24 mul.hi, 12 a copy.
f=$1
count() { grep -cE "$1" "$f"; }
echo "div/rem: $(count '(div|rem)\.[su](32|64) ')"
echo "mul.hi.u32 by a divisor's multiplier: $(count 'mul\.hi\.u32 %r[0-9]+, %[rv][0-9]+, %r[0-9]+;')"
echo "divisor parameters: $(count '^//@tls param __div[0-9]+ u64 divisor$')"
echo "PTX divisor parameters: $(count '\.param \.u64 [A-Za-z0-9_]+_param___div[0-9]+')"
echo "unpacked at the start: $(count 'mov\.b64 \{%r[0-9]+, %r[0-9]+\}, %arg[0-9]+;')"
grep -E '^//@tls divisor ' "$f"
