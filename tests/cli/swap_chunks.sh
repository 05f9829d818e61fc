#!/bin/sh
# Fast swap into chunks of host memory the daemon hands a model (memfds,
# passed with `prepare` and `suspend`): the bytes land in the chunks in
# order, an unused chunk is let go at once, all are let go after the
# resume, a short set is made up from the process's own memory, and
# anything that is not a memfd is refused with the model running on. The
# checks are in swap_chunks.py.
. "$(dirname "$0")/lib.sh"
: "${SHIM:?}" "${TESTMODEL:?}"
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
PORT=$((11000 + ($$ * 7) % 20000))
python3 "$(dirname "$0")/swap_chunks.py" "$SHIM" "$TESTMODEL" "$PORT"
