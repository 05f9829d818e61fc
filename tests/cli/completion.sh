#!/bin/sh
# The shell completions (completions/) load in bash, zsh and fish and
# complete from vram itself: `vram su` to suspend, a command's options, the
# running daemon's models for load, the GPU processes for suspend.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
export VRAM_SOCKET="$T/vram.sock"
export PATH="$(dirname "$VRAM"):$PATH"
C="$SRC/completions"
# a home of its own, in an empty folder (fish offers the files there)
export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" XDG_DATA_HOME="$T/home/.local/share" \
    XDG_CACHE_HOME="$T/home/.cache"
unset BASH_ENV ENV
mkdir -p "$HOME" "$T/empty"
cd "$T/empty"
PORTS=$((10000 + ($$ * 11) % 20000))

# a daemon with a model whose name only the daemon knows
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $PORTS

[model qwen-compl-$$]
command = $TESTMODEL --bytes 64M
vram = 1G
swap = driver

[model org/qwen-compl:$$]
command = $TESTMODEL --bytes 64M
vram = 1G
swap = driver
CONF
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
JOBS="$JOBS $!"
wait_for 10 "$VRAM" ps >/dev/null 2>&1 || cat "$T/serve.log"
start_job gpujob --bytes 512M || not_ok "a GPU job started"
JOB=$JOB_PID

# bash: complete -p shows the registration; _vram fills COMPREPLY
bash_complete() {
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _vram; printf "%s\n" "${COMPREPLY[@]}"' \
        sh "$C/vram.bash" "$@"
}
expect_eq "bash: the script registers _vram" "$(bash -c ". '$C/vram.bash'; complete -p vram")" "complete -F _vram vram"
expect_eq "bash: vram su -> suspend" "$(bash_complete vram su)" suspend
expect_eq "bash: vram status --ener -> --energy" "$(bash_complete vram status --ener)" --energy
expect_eq "bash: after --color, its values" "$(bash_complete vram status --color a | sort | tr '\n' ' ')" "always auto "
expect_eq "bash: vram load: the daemon's model" "$(bash_complete vram load qwen-c)" "qwen-compl-$$"
expect_eq "bash: vram ui --no -> --no-open" "$(bash_complete vram ui --no)" --no-open
expect_match "bash: vram suspend: the GPU job's pid" "$(bash_complete vram suspend "")" "^$JOB\$"
expect_eq "bash: vram import ll -> llama-swap" "$(bash_complete vram import ll)" llama-swap
expect_eq "bash: vram load org/q: a name with '/' and ':'" "$(bash_complete vram load org/q)" "org/qwen-compl:$$"
# bash splits the word at ':' (COMP_WORDBREAKS): what it has before it is not repeated
expect_eq "bash: vram load org/qwen-compl:<TAB>: the tag only, as bash splits at ':'" \
    "$(bash -c '. "$1"; COMP_WORDS=(vram load org/qwen-compl : ""); COMP_CWORD=4; COMP_LINE="vram load org/qwen-compl:"; COMP_POINT=${#COMP_LINE}; _vram; printf "%s\n" "${COMPREPLY[@]}"' sh "$C/vram.bash")" "$$"

# zsh: an interactive zsh in a pseudo-terminal, TAB pressed (zpty)
if command -v zsh >/dev/null; then
    zsh_complete() { zsh -f "$SRC/tests/helpers/zsh_complete.zsh" "$C" "$1" | tr ' ' '\n'; }
    expect_eq "zsh: vram su -> suspend" "$(zsh_complete "vram su")" suspend
    expect_eq "zsh: vram status --ener -> --energy" "$(zsh_complete "vram status --ener")" --energy
    expect_eq "zsh: vram load: the daemon's model" "$(zsh_complete "vram load qwen-c")" "qwen-compl-$$"
    expect_eq "zsh: vram ui --no -> --no-open" "$(zsh_complete "vram ui --no")" --no-open
    expect_match "zsh: vram suspend: the GPU job's pid" "$(zsh_complete "vram suspend ")" "^$JOB\$"
    expect_eq "zsh: vram import ll -> llama-swap" "$(zsh_complete "vram import ll")" llama-swap
    expect_eq "zsh: vram load org/q: a name with '/' and ':'" "$(zsh_complete "vram load org/q")" "org/qwen-compl:$$"
    expect_eq "zsh: without the script nothing completes (the harness can fail)" "$(zsh -f "$SRC/tests/helpers/zsh_complete.zsh" "$T" "vram su" | grep -c suspend)" 0
else
    not_ok "zsh is installed"
fi

# fish: complete -C asks for what TAB would offer, without a terminal;
# --no-config: no configuration read, and no folder to load completions from
if command -v fish >/dev/null; then
    fish_complete() { fish --no-config -c "source '$C/vram.fish'; complete -C '$1'" | cut -f1; }
    expect_eq "fish: vram su -> suspend" "$(fish_complete "vram su")" suspend
    expect_eq "fish: vram status --ener -> --energy" "$(fish_complete "vram status --ener")" --energy
    expect_eq "fish: vram load: the daemon's model" "$(fish_complete "vram load qwen-c")" "qwen-compl-$$"
    expect_eq "fish: vram ui --no -> --no-open" "$(fish_complete "vram ui --no")" --no-open
    expect_match "fish: vram suspend: the GPU job's pid" "$(fish_complete "vram suspend ")" "^$JOB\$"
    expect_eq "fish: vram import ll -> llama-swap" "$(fish_complete "vram import ll")" llama-swap
    expect_eq "fish: vram load org/q: a name with '/' and ':'" "$(fish_complete "vram load org/q")" "org/qwen-compl:$$"
    expect_eq "fish: without the script nothing completes (the harness can fail)" \
        "$(fish --no-config -c "complete -C 'vram su'" | grep -c suspend)" 0
else
    not_ok "fish is installed"
fi
finish
