# fish completion for tpush(1)
# Installed as share/fish/vendor_completions.d/tpush.fish, where fish looks for
# it the first time it completes `tpush`. Every option of `tpush --help` and of
# each `tpush SUBCOMMAND --help` must be offered here, with the values --help
# lists: tests/integration/test_docs.py checks it by running fish.

function __tpush_subcommands
    printf '%s\n' workers cp get rsync kill ps logs shell forward last config disconnect
end

# Options whose value is the next word (or --long=VALUE), within subcommand $argv[1]
# (empty: before any). A subcommand's own option wins over tpush's of that name:
# cp's and get's -p is --preserve (a flag), kill's --tpu is a flag, logs' -f is
# --follow (a flag) and its -n is --lines.
function __tpush_value_options
    set -l sub $argv[1]
    set -l globals -w -x -H --hosts -t --tpu --queued-resource --zone --project --worker \
        --gcloud-timeout -l --user -p --port -i --identity -F -o -J --jump -f --fanout \
        --persist --connect-timeout -u --timeout --alive-interval --host-key-check -e --env --cd --log \
        --label --color --out-dir --config
    switch "$sub"
        case cp get
            set -e globals[(contains -i -- -p $globals)]
        case kill
            set -e globals[(contains -i -- --tpu $globals)]
            set -a globals -s --signal --grace
        case logs
            set -e globals[(contains -i -- -f $globals)]
            set -a globals -n --lines
        case forward
            set -a globals --on
    end
    printf '%s\n' $globals
end

# Where the words before the cursor leave us:
#   (empty)   tpush's options so far: a subcommand or the remote command may come next
#   SUB       inside subcommand SUB (not rsync): its options, tpush's, its arguments
#   args      after `--` inside a subcommand: only its arguments
#   command   the remote command (or rsync and its arguments) has begun
function __tpush_state
    set -l words (commandline -opc)
    set -e words[1]
    set -l sub
    set -l values (__tpush_value_options)
    set -l skip 0
    for w in $words
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $w
            case --
                if test -n "$sub"
                    echo args
                else
                    echo command
                end
                return
            case '--*=*'
                continue
            case '-*'
                contains -- $w $values; and set skip 1
            case '*'
                if test -n "$sub"
                    continue # an argument of the subcommand; options may still follow
                else if contains -- $w (__tpush_subcommands); and test $w != rsync
                    set sub $w
                    set values (__tpush_value_options $sub)
                else
                    echo command # the remote command, or rsync: every word after it is rsync's
                    return
                end
        end
    end
    echo $sub
end

# True when the line is in one of the states $argv ("" for the start).
function __tpush_in
    contains -- "$(__tpush_state)" $argv
end

# tpush's own options apply: at the start or inside a subcommand other than rsync.
function __tpush_options
    not __tpush_in args command
end

# The remote command's own completion (or rsync's), fish's helper skipping tpush's
# options and their values.
function __tpush_command
    __fish_complete_subcommand -- (__tpush_value_options)
end

# --- the first word after tpush's options: a subcommand or a remote command -------------
complete -c tpush -n '__tpush_in ""' -f -a workers -d 'list the workers and where each came from'
complete -c tpush -n '__tpush_in ""' -f -a cp -d 'copy files to every worker'
complete -c tpush -n '__tpush_in ""' -f -a get -d 'gather files into LOCALDIR/<label>/'
complete -c tpush -n '__tpush_in ""' -f -a rsync -d 'rsync to/from every worker (worker side :PATH)'
complete -c tpush -n '__tpush_in ""' -f -a kill -d 'stop matching processes, or what holds the TPU'
complete -c tpush -n '__tpush_in ""' -f -a ps -d 'matching processes on every worker'
complete -c tpush -n '__tpush_in ""' -f -a logs -d 'the end of FILE on every worker (-f: follow)'
complete -c tpush -n '__tpush_in ""' -f -a shell -d 'an interactive login shell on one worker (the first, or LABEL)'
complete -c tpush -n '__tpush_in ""' -f -a forward -d "forward local ports to a worker's side, as ssh -L does"
complete -c tpush -n '__tpush_in ""' -f -a last -d "the last run's summary"
complete -c tpush -n '__tpush_in ""' -f -a config -d 'the config file and groups read, and where each setting came from'
complete -c tpush -n '__tpush_in ""' -f -a disconnect -d 'end the persist master of these workers'
complete -c tpush -n '__tpush_in "" command' -f -a '(__tpush_command)'

# --- tpush's options (before the subcommand or the command, or after a subcommand) --------
# General
complete -c tpush -n __tpush_options -s h -l help -d 'Print the option summary and exit'
complete -c tpush -n __tpush_options -l version -d "Print tpush's and libssh2's versions"
complete -c tpush -n __tpush_options -l config -r -F -d 'tpush config file (none: no file)'
# Workers
complete -c tpush -n __tpush_options -s w -x -a '(__fish_print_hostnames)' -d 'Hosts: node[01-16],user@h:port,^FILE'
complete -c tpush -n __tpush_options -s x -x -a '(__fish_print_hostnames)' -d 'Leave these hosts out'
complete -c tpush -n __tpush_options -s H -l hosts -r -F -d 'Hosts file, one [user@]host[:port] per line'
complete -c tpush -n '__tpush_options; and not __tpush_in kill' -s t -l tpu -x -d 'TPU VM name(s), resolved through gcloud'
complete -c tpush -n '__tpush_in kill' -s t -x -d 'TPU VM name(s), resolved through gcloud'
complete -c tpush -n __tpush_options -l queued-resource -x -d 'Queued resource: every worker of every slice'
complete -c tpush -n __tpush_options -l zone -x -d 'TPU zone'
complete -c tpush -n __tpush_options -l project -x -d 'TPU project'
complete -c tpush -n __tpush_options -l worker -x -a 'all 0' -d 'TPU workers: all, 0, 1,4 or 1-3'
complete -c tpush -n __tpush_options -l internal-ip -d "Connect to TPU workers' internal addresses"
complete -c tpush -n __tpush_options -l tunnel-through-iap -d 'Reach TPU workers through IAP tunnels'
complete -c tpush -n __tpush_options -l refresh -d 'Describe the TPU again instead of using the cache'
complete -c tpush -n __tpush_options -l failed -d 'Only the workers that did not succeed in the last run'
complete -c tpush -n __tpush_options -l fetch-host-keys -d "Pin TPU workers' host keys from gcloud"
complete -c tpush -n __tpush_options -l gcloud-timeout -x -d 'Seconds each gcloud call may take (default 60)'
# Connection
complete -c tpush -n __tpush_options -s l -l user -x -a '(__fish_complete_users)' -d 'Remote user'
complete -c tpush -n '__tpush_options; and not __tpush_in cp get' -s p -l port -x -d 'Remote port'
complete -c tpush -n '__tpush_in cp get' -l port -x -d 'Remote port'
complete -c tpush -n __tpush_options -s i -l identity -r -F -d 'Private key file'
complete -c tpush -n __tpush_options -s F -r -F -d 'ssh_config file to read (none: no file)'
complete -c tpush -n __tpush_options -s o -x -d 'An ssh_config line, before every file' \
    -a 'HostName= User= Port= IdentityFile= IdentitiesOnly= IdentityAgent= ForwardAgent= ProxyJump= ProxyCommand= ConnectTimeout= ServerAliveInterval= ServerAliveCountMax= StrictHostKeyChecking= UserKnownHostsFile= GlobalKnownHostsFile= HostKeyAlias= AddressFamily= ConnectionAttempts='
complete -c tpush -n __tpush_options -s A -d 'Forward your ssh-agent to the commands, as ssh -A'
complete -c tpush -n __tpush_options -s a -d 'Do not forward your ssh-agent (the default)'
complete -c tpush -n __tpush_options -s J -l jump -x -a '(__fish_print_hostnames)' -d 'Reach the workers through these jump hosts'
complete -c tpush -n '__tpush_options; and not __tpush_in logs' -s f -l fanout -x -d 'Sessions at once (default: all, up to 1024)'
complete -c tpush -n '__tpush_in logs' -l fanout -x -d 'Sessions at once (default: all, up to 1024)'
complete -c tpush -n __tpush_options -l persist -x -a '0 10m 30m 1h' -d 'Keep the sessions open this long for the next runs (0: off)'
complete -c tpush -n __tpush_options -l connect-timeout -x -d 'Seconds for TCP connect + SSH handshake + auth'
complete -c tpush -n __tpush_options -s u -l timeout -x -d 'Seconds a command may run on a worker'
complete -c tpush -n __tpush_options -l alive-interval -x -d 'Keepalive seconds; silent for 3 intervals = lost'
complete -c tpush -n __tpush_options -l host-key-check -x -a 'accept-new\t"record unknown keys (default)" yes\t"unknown keys fail" no\t"no check at all (dangerous)"' -d 'How to check host keys'
# Remote command
complete -c tpush -n __tpush_options -s e -l env -x -a '(set --names --export)' -d 'Export NAME or NAME=VALUE to the command'
complete -c tpush -n __tpush_options -l cd -x -d 'Run the command in DIR on every worker'
complete -c tpush -n __tpush_options -l tty -d 'Give each worker a pseudo-terminal'
complete -c tpush -n '__tpush_options; and not __tpush_in kill' -l sudo -d 'Run the command as root under sudo (a password asked once)'
complete -c tpush -n '__tpush_options; and not __tpush_in logs' -s n -l no-stdin -d "Do not send tpush's stdin to the workers"
complete -c tpush -n '__tpush_in logs' -l no-stdin -d "Do not send tpush's stdin to the workers"
complete -c tpush -n __tpush_options -l detach -d 'Start the command in the background on every worker (needs --log)'
complete -c tpush -n __tpush_options -l log -r -F -d 'With --detach: the output file on each worker'
# Output
complete -c tpush -n __tpush_options -l label -x -a 'host\t"the host as written (default)" index\t"w0, w1, ..."' -d 'Prefix lines with the host or the index'
complete -c tpush -n __tpush_options -s N -l no-prefix -d 'Print lines without the worker prefix'
complete -c tpush -n __tpush_options -l raw -d "Print workers' bytes unescaped on a terminal too"
complete -c tpush -n __tpush_options -s q -l quiet -d 'No summary when every worker succeeded'
complete -c tpush -n __tpush_options -s S -l summary-always -d 'Summary line for every worker, ok ones too'
complete -c tpush -n __tpush_options -s v -l verbose -d 'Debug log on stderr (repeat for more)'
complete -c tpush -n __tpush_options -s b -l gather -d 'Print each distinct output once, at the end'
complete -c tpush -n __tpush_options -l leader -d 'Stream one worker live (--leader=LABEL), the others where they differ'
complete -c tpush -n __tpush_options -l diff -d 'The most common output once, the others as diffs against it'
complete -c tpush -n __tpush_options -l live -d 'Full screen: a row per worker, live'
complete -c tpush -n __tpush_options -l json -d 'JSON Lines on stdout: lines, outcomes, a summary'
complete -c tpush -n __tpush_options -l out-dir -x -a '(__fish_complete_directories)' -d "Also write each worker's output to DIR/LABEL.out and .err"
complete -c tpush -n __tpush_options -l fail-fast -d 'Stop every worker as soon as one fails'
complete -c tpush -n __tpush_options -l color -x -a 'auto always never' -d 'Colour the prefixes'

# --- each subcommand's own options (`tpush SUB --help`) ----------------------------------
complete -c tpush -n '__tpush_in cp get' -s r -l recursive -d 'Copy directories and everything in them'
complete -c tpush -n '__tpush_in cp get' -s p -l preserve -d "Keep each file's mode and modification time"
complete -c tpush -n '__tpush_in cp' -l relay -d 'Send the bytes once; the workers pass them on'
complete -c tpush -n '__tpush_in cp' -l no-relay -d 'Send every worker its own copy'
complete -c tpush -n '__tpush_in kill' -s s -l signal -x -a 'TERM INT HUP KILL USR1 USR2 QUIT STOP CONT' -d 'Signal to send first (default TERM)'
complete -c tpush -n '__tpush_in kill' -l grace -x -d 'Seconds to wait before KILL (default 5)'
complete -c tpush -n '__tpush_in kill' -l sudo -d "Run as root under sudo: every user's processes"
complete -c tpush -n '__tpush_in kill' -l tpu -d 'Free the TPU instead of matching a PATTERN'
complete -c tpush -n '__tpush_in ps' -l all-users -d "Every user's processes"
complete -c tpush -n '__tpush_in logs' -s f -l follow -d 'Follow the file as it grows, until Ctrl-C'
complete -c tpush -n '__tpush_in logs' -s n -l lines -x -d 'Lines to show: N, or +N from line N'
complete -c tpush -n '__tpush_in forward' -l each -d 'Forward from every worker, to consecutive local ports'
complete -c tpush -n '__tpush_in forward' -l on -x -d 'The worker to forward to: its label (w3, s1w0) or host'
