# zsh_complete.zsh DIR LINE: what zsh's completion offers for LINE, with the
# completion functions of DIR, one per line: an interactive zsh in a
# pseudo-terminal (zpty), LINE typed and TAB pressed, compadd watched.
zmodload zsh/zpty
dir=$1 line=$2
zpty z zsh -f -i
zpty -w z "PROMPT='' RPROMPT=''; fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd () { local -a __h; builtin compadd -O __h "$@"; (( $#__h )) && print -r -- "<hit>${^__h}</hit>"; builtin compadd "$@" }'
zpty -w z "print -r -- '<ready>'"
zpty -r z out '*<ready>*' || exit 1
zpty -w -n z "$line"$'\t'
# read until the completion has been quiet for a second (the words come
# from vram, which may take a moment), at most ten seconds
out= quiet=0
for i in {1..100}; do
    if zpty -r -t z chunk; then
        out+=$chunk
        quiet=0
    else
        ((quiet++))
        [[ $out == *'</hit>'* && $quiet -ge 10 ]] && break
        sleep 0.1
    fi
done
print -r -- "$out" | grep -o '<hit>[^<]*</hit>' | sed 's/<hit>\(.*\)<\/hit>/\1/'
zpty -d z
