#!/usr/bin/env bash
# fence_release.sh FILE.ptx: per entry of kernels/staged.tls, its proxy
# fences: both have the one after the mbarrier's init; before the TMA store,
# Staged has fence.proxy_async's two-way fence and StagedRelease
# fence.proxy_async_release's one-way release.
awk '/^\.visible \.entry/ { name = $3; sub(/\($/, "", name) }
     /fence\.proxy\.async/ { sub(/^[ \t]+/, ""); print name ": " $0 }' "$1"
