# zsh_complete.zsh DIR LINE: what zsh's completion offers for LINE, with the
# completion functions of DIR, one per line: an interactive zsh in a
# pseudo-terminal (zpty), LINE typed and TAB pressed, compadd watched.
#
# The inner zsh lives in a world of its own: its ZDOTDIR and HOME are a
# fresh folder, the system's zshrc is not read, and its fpath is DIR and
# zsh's own functions, without any other folder that holds a _vram (the
# one an installed package puts in vendor-completions). What it offers goes
# to a file, not the terminal, and the harness waits for events the inner
# zsh signals itself, never for time: <ready> when its line editor waits
# for input, <done> when the completion TAB ran has returned. The terminal
# echoes what is typed (the kernel while zsh runs a command, the line
# editor once it reads), so a marker may never be in typed text: nothing
# is typed here but LINE and TAB.
zmodload zsh/zpty zsh/system zsh/datetime || exit 1
dir=$1 line=$2
tmp=$(mktemp -d) || exit 1
local -a own
for d in $fpath; do
    [[ -e $d/_vram ]] || own+=($d)
done
cat >$tmp/.zshenv <<'EOF'
unsetopt global_rcs
EOF
cat >$tmp/.zshrc <<EOF
PROMPT='' RPROMPT=''
fpath=(${(q)dir} ${(q@)own})
autoload -Uz compinit && compinit -u -D
# no list, no bell: TAB never waits for a key ("do you wish to see all...")
setopt no_auto_list no_beep
compadd () {
    local -a __h
    builtin compadd -O __h "\$@"
    (( \$#__h )) && print -rl -- \$__h >>${(q)tmp}/hits
    builtin compadd "\$@"
}
# TAB: the completion TAB runs, then <done>
tab-then-done () { zle expand-or-complete; print -n -- '<done>' }
zle -N tab-then-done
bindkey '^I' tab-then-done
zle-line-init () { print -n -- '<ready>' }
zle -N zle-line-init
EOF
: >$tmp/hits
zpty z env ZDOTDIR=$tmp HOME=$tmp zsh -i || { rm -rf -- $tmp; exit 1; }
fd=$REPLY
# set only now: the shell zpty forked would run it too, and remove the
# folder when zpty -d hangs it up
trap 'zpty -d z 2>/dev/null; rm -rf -- $tmp' EXIT
# until_seen MARKER: reads the terminal until MARKER comes, 60 s at most
# (under load a start can be slow; no event is missed by waiting longer)
until_seen() {
    local out= chunk
    local -F deadline=$(( EPOCHREALTIME + 60 ))
    while (( EPOCHREALTIME < deadline )); do
        if sysread -t 1 -i $fd chunk; then
            out+=$chunk
            [[ $out == *$1* ]] && return 0
        elif (( $? != 4 )); then # 4: nothing yet; else the terminal closed
            break
        fi
    done
    print -r -- "zsh_complete: no $1 from the inner zsh; it wrote: $out" >&2
    return 1
}
until_seen '<ready>' || exit 1
zpty -w -n z "$line"$'\t'
until_seen '<done>' || exit 1
cat $tmp/hits
