#!/bin/sh
# bounded.sh KB COMMAND...: runs COMMAND with at most KB kilobytes of
# address space (ulimit -v), so that a quadratic allocation fails at once
# instead of filling the machine. KB = 0 runs it unbounded: sanitized
# builds reserve terabytes of shadow address space (there the test's time
# limit still catches a quadratic blow-up).
kb=$1
shift
if [ "$kb" != 0 ]; then ulimit -v "$kb" || exit 125; fi
exec "$@"
