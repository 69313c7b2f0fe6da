#!/usr/bin/env bash
# entry_profile.sh TLSC_PTX ENTRY_PROFILE: scripts/entry_profile.sh on the
# PTX of tests/gpu/kernels/copy_strength.tls without cuobjdump: every
# entry, its registers (a number: which one is ptxas's business) and no
# spill.
"$2" "$1" none | sed -E 's/regs=[0-9]+ /regs=N /' | sort
