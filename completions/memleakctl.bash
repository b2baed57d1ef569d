# bash completion for memleakctl(1)                                     -*- shell-script -*-
# Commands and options as 'memleakctl COMMAND --help' lists them
# (tests/unit/check-completions.py checks that they agree).

_memleakctl()
{
        local cur prev words cword
        _init_completion || return

        local global_opts='-s --socket -j --json -h --help -V --version'
        local commands='attach detach status metrics report leaks history top run html'
        local -A command_opts=(
                [attach]='-p --pid --unit --cgroup -o --obj --mmap --unwind --follow-forks -k --kernel --kernel-filter --min-size --max-size --sample-bytes -j --json -h --help'
                [detach]='-p --pid --children --unit --cgroup -k --kernel -j --json -h --help'
                [status]='--unit --cgroup -j --json -h --help'
                [metrics]='-j --json -h --help'
                [report]='-p --pid --children --unit --cgroup -k --kernel -t --top --min-age --reachability --suppressions --show-addresses -f --format -o --output --value --folded -j --json -h --help'
                [leaks]='-p --pid --children --unit --cgroup --reachability --no-reachability --error-exitcode --fail-on --suppressions -j --json -h --help'
                [history]='-p --pid --children --unit --cgroup -k --kernel --stack -t --top -j --json -h --help'
                [top]='-p --pid --children --sort -n --rows --interval --frames -h --help'
                [run]='-o --obj -t --top --min-size --mmap --unwind --follow-forks --no-reachability --sample-bytes -j --json --format -O --output --untraced-ok --error-exitcode --fail-on --suppressions -h --help'
                [html]='-p --pid --children --unit --cgroup -k --kernel -t --top -o --output -h --help'
        )

        # The command: the first word after the global options (and --socket's argument).
        local i command='' command_index=0
        for ((i = 1; i < cword; i++)); do
                case ${words[i]} in
                -s | --socket) ((i++)) ;;
                -*) ;;
                *)
                        command=${words[i]}
                        command_index=$i
                        break
                        ;;
                esac
        done

        if [[ -z $command ]]; then
                case $prev in
                -s | --socket)
                        _filedir
                        return
                        ;;
                esac
                if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W "$global_opts" -- "$cur"))
                else
                        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
                fi
                return
        fi

        # run: after '--', complete the command it runs and that command's arguments.
        if [[ $command == run ]]; then
                for ((i = command_index + 1; i < cword; i++)); do
                        if [[ ${words[i]} == -- ]]; then
                                _command_offset $((i + 1))
                                return
                        fi
                done
        fi

        case $prev in
        -p | --pid)
                _pids
                return
                ;;
        -o | --obj)
                if [[ $command == html ]]; then
                        _filedir html
                else
                        _filedir
                fi
                return
                ;;
        -O | --output | --suppressions)
                _filedir
                return
                ;;
        --fail-on)
                # a comma list: complete the item after the last comma
                local done_items=${cur%"${cur##*,}"}
                if [[ $command == run ]]; then
                        COMPREPLY=($(compgen -P "$done_items" -W 'lost growing outstanding' -- "${cur##*,}"))
                else
                        COMPREPLY=($(compgen -P "$done_items" -W 'lost growing' -- "${cur##*,}"))
                fi
                return
                ;;
        --unwind)
                COMPREPLY=($(compgen -W 'auto dwarf fp' -- "$cur"))
                return
                ;;
        --sort)
                COMPREPLY=($(compgen -W 'growth bytes count' -- "$cur"))
                return
                ;;
        -f | --format)
                if [[ $command == report ]]; then
                        COMPREPLY=($(compgen -W 'text json folded pprof html' -- "$cur"))
                else
                        COMPREPLY=($(compgen -W 'text json folded pprof' -- "$cur"))
                fi
                return
                ;;
        --value)
                COMPREPLY=($(compgen -W 'bytes allocs' -- "$cur"))
                return
                ;;
        --kernel-filter)
                compopt -o nospace
                COMPREPLY=($(compgen -W 'pid= comm=' -- "$cur"))
                return
                ;;
        -t | --top | -n | --rows | --min-size | --max-size | --sample-bytes | --min-age | \
        --interval | --frames | --stack | --error-exitcode)
                return
                ;;
        esac

        if [[ $cur == -* || $command != run ]]; then
                COMPREPLY=($(compgen -W "${command_opts[$command]} $([[ $command == run ]] && echo --)" -- "$cur"))
        fi
} &&
        complete -F _memleakctl memleakctl

# ex: filetype=sh
