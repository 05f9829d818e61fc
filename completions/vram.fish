# fish completion for vram. The words come from vram itself (vram complete):
# its commands, each command's options, the models of the running daemon,
# the GPU processes you may suspend and the ones vram suspend left suspended.

function __vram_command
    # the command: the first word after vram that is not a global option
    set -l words (commandline -opc)
    set -l skip 0
    for w in $words[2..-1]
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $w
            case --sim --color
                set skip 1
            case '-*'
            case '*'
                echo $w
                return 0
        end
    end
    return 1
end

function __vram_no_command
    not __vram_command >/dev/null
end

function __vram_is
    test "$(__vram_command)" = "$argv[1]"
end

function __vram_options
    set -l cmd (__vram_command)
    for o in (vram complete options $cmd 2>/dev/null)
        echo $o
    end
end

complete -c vram -f
complete -c vram -n __vram_no_command -l sim -r -F -d 'a simulated machine (JSON)'
complete -c vram -n __vram_no_command -l color -x -a 'auto always never' -d colour
complete -c vram -n __vram_no_command -l version -d 'the version'
complete -c vram -n __vram_no_command -x -a '(vram complete commands 2>/dev/null)'
complete -c vram -n 'not __vram_no_command; and string match -q -- "-*" (commandline -ct)' -x -a '(__vram_options)'
complete -c vram -n '__vram_is load; or __vram_is unload; or __vram_is logs' -x -a '(vram complete models 2>/dev/null)'
complete -c vram -n '__vram_is suspend' -x -a '(vram complete models 2>/dev/null) (vram complete pids 2>/dev/null)'
complete -c vram -n '__vram_is resume' -x -a '(vram complete models 2>/dev/null) (vram complete suspended 2>/dev/null)'
complete -c vram -n '__vram_is help' -x -a '(vram complete commands 2>/dev/null) vram.conf'
complete -c vram -n '__vram_is headless' -x -a 'status on off'
complete -c vram -n '__vram_is slurm' -x -a 'gres step epilog'
complete -c vram -n '__vram_is fit' -F
complete -c vram -n '__vram_is import; and test (count (commandline -opc)) -eq 2' -x -a llama-swap -d 'its config.yaml'
complete -c vram -n '__vram_is import; and test (count (commandline -opc)) -gt 2' -F
complete -c vram -n 'not __vram_no_command' -l color -x -a 'auto always never'
complete -c vram -n 'not __vram_no_command' -l config -s c -r -F
complete -c vram -n 'not __vram_no_command' -l socket -r -F
complete -c vram -n '__vram_is top' -l sort -s s -x -a 'pid user gpu role type vram sm mbw enc dec cpu rss time state command'
