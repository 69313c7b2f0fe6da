#!/usr/bin/env bash
# tma_wait.sh FILE.ptx: the bulk-group waits of kernels/tma_wait.tls, one
# count per form: read=True is cp.async.bulk.wait_group.read, the default
# (read=False) the plain cp.async.bulk.wait_group.
set -eu
grep -oE 'cp[.]async[.]bulk[.]wait_group[.a-z]* [0-9]+' "$1" | sort | uniq -c | awk '{print $2, $3, $1}'
