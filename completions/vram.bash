# bash completion for vram. The words come from vram itself (vram complete):
# its commands, each command's options, the models of the running daemon,
# the GPU processes you may suspend and the ones vram suspend left suspended.

# The daemon's models matching the word being completed. Bash splits words
# at ':' (COMP_WORDBREAKS), and Ollama's names have one (llama3.1:8b): the
# word is taken whole from the line, and what bash already has before its
# last ':' is taken off each answer.
_vram_models() {
    local line=${COMP_LINE:0:COMP_POINT} word
    word=${line##*[[:space:]]}
    COMPREPLY=($(compgen -W "$(vram complete models $1 2>/dev/null) $2" -- "$word"))
    if [[ $word == *:* && $COMP_WORDBREAKS == *:* ]]; then
        local pre=${word%"${word##*:}"} i
        for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$pre"}; done
    fi
}

_vram() {
    local cur prev cmd i w socket=
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    # the command: the first word after vram that is not a global option
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
        --sim | --color) ((i++)) ;;
        -*) ;;
        *) cmd=$w; break ;;
        esac
    done
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == --socket || ${COMP_WORDS[i]} == -s ]] && socket=${COMP_WORDS[i + 1]}
    done
    case $prev in
    --sim | --config | -c | --proc-root | --sys-root | --root)
        COMPREPLY=($(compgen -f -- "$cur"))
        [[ $prev == --proc-root || $prev == --sys-root || $prev == --root ]] &&
            COMPREPLY=($(compgen -d -- "$cur"))
        return
        ;;
    --sort | -s)
        # top's -s is its sort; everywhere else, a socket
        if [[ $prev == --sort || $cmd == top ]]; then
            COMPREPLY=($(compgen -W "pid user gpu role type vram sm mbw enc dec cpu rss time state command" -- "$cur"))
            return
        fi
        [[ $cmd == status ]] || { COMPREPLY=($(compgen -f -- "$cur")); return; }
        ;;
    --socket)
        [[ $cmd == status ]] || { COMPREPLY=($(compgen -f -- "$cur")); return; }
        ;;
    --color)
        COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
        return
        ;;
    esac
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--sim --color --help --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(vram complete commands 2>/dev/null)" -- "$cur"))
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(vram complete options "$cmd" 2>/dev/null)" -- "$cur"))
        return
    fi
    case $cmd in
    load | unload | logs)
        _vram_models "$socket"
        ;;
    suspend)
        _vram_models "$socket" "$(vram complete pids 2>/dev/null | cut -f1)"
        ;;
    resume)
        _vram_models "$socket" "$(vram complete suspended 2>/dev/null | cut -f1)"
        ;;
    help)
        COMPREPLY=($(compgen -W "$(vram complete commands 2>/dev/null) vram.conf" -- "$cur"))
        ;;
    headless)
        COMPREPLY=($(compgen -W "status on off" -- "$cur"))
        ;;
    slurm)
        COMPREPLY=($(compgen -W "gres step epilog" -- "$cur"))
        ;;
    fit)
        COMPREPLY=($(compgen -f -- "$cur"))
        ;;
    import)
        # what to import from, then its file
        if [[ $prev == import ]]; then
            COMPREPLY=($(compgen -W "llama-swap" -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        ;;
    run)
        # after --, the command to run and its arguments
        for ((i = 1; i < COMP_CWORD; i++)); do
            if [[ ${COMP_WORDS[i]} == -- ]]; then
                COMPREPLY=($(compgen -c -- "$cur"))
                ((i < COMP_CWORD - 1)) && COMPREPLY=($(compgen -f -- "$cur"))
                return
            fi
        done
        ;;
    esac
}
complete -F _vram vram
