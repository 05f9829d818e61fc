#!/bin/sh
# build_before.sh: vram as it was at an earlier revision, built as
# build_for_device.sh builds (release), into .devbuild/before/vram, so that
# a GPU run can time it beside today's in the same interleaved rounds
# (bench/status_vs_smi.sh's BEFORE=). Run it after build_for_device.sh,
# which empties .devbuild/.
#
#   sh bench/build_before.sh REV        # e.g. b501e1d
set -eu
cd "$(dirname "$0")/.."
REV=${1:?usage: build_before.sh REV}
W=$(mktemp -d /tmp/vram-before-XXXXXX)
trap 'rm -rf "$W"' EXIT
git archive "$REV" | tar -x -C "$W"
meson setup "$W/build" --buildtype=release -Dstatic_yaml=true >/dev/null
ninja -C "$W/build" vram >/dev/null
mkdir -p .devbuild/before
cp "$W/build/vram" .devbuild/before/vram
echo "build_before: .devbuild/before/vram is $(git rev-parse --short "$REV")"
