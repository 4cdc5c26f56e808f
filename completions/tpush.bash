# bash completion for tpush(1)                               -*- shell-script -*-
# Installed as share/bash-completion/completions/tpush. Works with or without
# the bash-completion package. Every option in `tpush --help` must be listed
# here: tests/integration/test_docs.py checks it.

_tpush_options='
    -h --help --version --config
    -w -x -H --hosts -t --tpu --queued-resource --zone --project --worker
    --internal-ip --refresh --fetch-host-keys --gcloud-timeout --failed
    -l --user -p --port -i --identity -F -o -A -a -J --jump -f --fanout --persist --connect-timeout -u --timeout
    --alive-interval --host-key-check --tunnel-through-iap
    -e --env --cd --tty --sudo -n --no-stdin --detach --log
    --label -N --no-prefix --raw -q --quiet -S --summary-always -v --verbose --color
    -b --gather --leader --diff --live --json --out-dir --fail-fast'

# Each subcommand's own options (`tpush SUB --help`, its "SUB options" group).
# rsync has none of tpush's: every word after it is rsync's.
_tpush_subcommands='workers cp get rsync kill ps logs shell forward last config disconnect'
_tpush_sub_options() {
    case $1 in
        cp) echo '-r --recursive -p --preserve --relay --no-relay' ;;
        get) echo '-r --recursive -p --preserve' ;;
        kill) echo '-s --signal --grace --sudo --tpu' ;;
        ps) echo '--all-users' ;;
        logs) echo '-f --follow -n --lines' ;;
        forward) echo '--each --on' ;;
    esac
}
_tpush_sub_takes_value() {
    case $1 in
        kill) echo '-s --signal --grace' ;;
        logs) echo '-n --lines' ;;
        forward) echo '--on' ;;
    esac
}

# Options that take a value (the next word, or --long=VALUE).
_tpush_takes_value='-w -x -H --hosts -t --tpu --queued-resource --zone --project --worker
    --gcloud-timeout
    -l --user -p --port -i --identity -F -o -J --jump -f --fanout --persist --connect-timeout -u --timeout
    --alive-interval --host-key-check --label --color -e --env --cd --log --out-dir --config'

_tpush_values() {  # _tpush_values OPTION CURRENT-WORD
    local opt=$1 cur=$2
    case $opt in
        --out-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            ;;
        -H | --hosts | -i | --identity | --log | -F | --config)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            ;;
        -w | -x)
            if [[ $cur == ^* ]]; then  # ^FILE: a hosts file
                compopt -o filenames 2>/dev/null
                COMPREPLY=($(compgen -P '^' -f -- "${cur#^}"))
            else
                COMPREPLY=($(compgen -A hostname -- "$cur"))
            fi
            ;;
        -l | --user) COMPREPLY=($(compgen -u -- "$cur")) ;;
        --host-key-check) COMPREPLY=($(compgen -W 'accept-new yes no' -- "$cur")) ;;
        --persist) COMPREPLY=($(compgen -W '0 10m 30m 1h' -- "$cur")) ;;
        --label) COMPREPLY=($(compgen -W 'host index' -- "$cur")) ;;
        --color) COMPREPLY=($(compgen -W 'auto always never' -- "$cur")) ;;
        --worker) COMPREPLY=($(compgen -W 'all 0' -- "$cur")) ;;
        -o) COMPREPLY=($(compgen -W 'HostName= User= Port= IdentityFile= IdentitiesOnly= IdentityAgent= ProxyJump= ProxyCommand= ConnectTimeout= ServerAliveInterval= ServerAliveCountMax= StrictHostKeyChecking= UserKnownHostsFile= GlobalKnownHostsFile= HostKeyAlias= AddressFamily= ConnectionAttempts=' -- "$cur")) ;;
        -s | --signal) COMPREPLY=($(compgen -W 'TERM INT HUP KILL USR1 USR2 QUIT STOP CONT' -- "$cur")) ;;
        *) COMPREPLY=() ;;  # names, numbers: nothing to offer
    esac
}

_tpush() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion -n =: || return
    else
        # Split the line ourselves so that --opt=value and host:port stay one
        # word (COMP_WORDS splits at = and :).
        local line=${COMP_LINE:0:COMP_POINT}
        read -ra words <<<"$line"
        [[ -z $line || $line == *[[:space:]] ]] && words+=('')
        cword=$((${#words[@]} - 1))
        cur=${words[cword]}
        prev=${words[cword - 1]}
    fi

    # Find the first word that is not an option: a subcommand, or the remote
    # command. Past the remote command, complete like a shell.
    local i w sub='' takes=$_tpush_takes_value
    for ((i = 1; i < cword; i++)); do
        w=${words[i]}
        if [[ $w == -- ]]; then
            if [[ -z $sub ]] && ((i + 1 == cword)); then  # the word after --: a command name
                COMPREPLY=($(compgen -c -- "$cur"))
            else
                compopt -o default 2>/dev/null
                COMPREPLY=()
            fi
            return
        elif [[ $w == -* ]]; then
            # An option whose value is the next word: skip that word.
            if [[ $w != *=* && " ${takes//$'\n'/ } " == *" $w "* ]]; then
                ((i++))
            fi
        elif [[ -z $sub && " $_tpush_subcommands " == *" $w "* ]]; then
            sub=$w  # its own options from here on, and its arguments
            takes="$(_tpush_sub_takes_value "$sub") $takes"
        else
            compopt -o default 2>/dev/null  # arguments of the remote command or the subcommand
            COMPREPLY=()
            [[ -n $sub && $sub != rsync ]] || return
            break
        fi
    done
    if [[ $sub == rsync ]]; then  # rsync's own words
        compopt -o default 2>/dev/null
        COMPREPLY=()
        return
    fi

    # The value of an option.
    if [[ $cur == --*=* ]]; then
        _tpush_values "${cur%%=*}" "${cur#*=}"
        return
    fi
    if [[ $prev == -* && " ${takes//$'\n'/ } " == *" $prev "* ]]; then
        _tpush_values "$prev" "$cur"
        return
    fi

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_tpush_sub_options "$sub") $_tpush_options" -- "$cur"))
        return
    fi
    if [[ -n $sub ]]; then  # a subcommand's argument: files (cp, get), patterns ...
        compopt -o default 2>/dev/null
        COMPREPLY=()
        return
    fi
    # First word after the options: a subcommand or a remote command.
    COMPREPLY=($(compgen -W "$_tpush_subcommands" -- "$cur") $(compgen -c -- "$cur"))
} &&
    complete -F _tpush tpush

# ex: filetype=sh
