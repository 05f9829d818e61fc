#!/bin/sh
# Fast swap into a window of the daemon's host pool in pieces (a fragmented
# pool): the bytes land inside the pieces only, in order, and come back
# intact; a short window or a piece outside the pool is refused with the
# model running on. The checks are in swap_pieces.py.
. "$(dirname "$0")/lib.sh"
: "${SHIM:?}" "${TESTMODEL:?}"
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
PORT=$((21000 + ($$ * 7) % 20000))
python3 "$(dirname "$0")/swap_pieces.py" "$SHIM" "$TESTMODEL" "$PORT"
