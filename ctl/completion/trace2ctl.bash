# bash completion for trace2ctl. Installed into
# share/bash-completion/completions (loaded on demand by bash-completion);
# or `source` it from ~/.bashrc. Uses nothing but bash's own `complete`.
# Keep in step with the flags in ctl/main.cpp and ctl/commands/*.cpp (a test
# compares them with `trace2ctl <command> --help`).

# The short SIDs of the latest sessions you ran, as `trace2ctl sessions`
# prints them (show, tree and export take them), from the database the
# command line names with --db, if any.
_trace2ctl_sids() {
    local db=() i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --db) db=(--db "${COMP_WORDS[i+1]}") ;;
            --db=*) db=("${COMP_WORDS[i]}") ;;
        esac
    done
    "${COMP_WORDS[0]}" "${db[@]}" --no-pager --color never sessions -n 50 2>/dev/null | awk 'NR > 2 {print $1}'
}

_trace2ctl() {
    local cur prev words cword
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="advice compare doctor export report sessions show sql stats status top tree"
    local global="--db --format --json --color --utc -l --no-trunc --no-pager --timeout --only-uid --help --version"

    # Values of the flags that take one.
    case $prev in
        --db|--html|-o|--output)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --format)
            # `export --format` takes chrome or otlp-json; the global one the four formats.
            local i
            for ((i = 1; i < COMP_CWORD; i++)); do
                if [[ ${COMP_WORDS[i]} == export ]]; then
                    COMPREPLY=($(compgen -W "chrome otlp-json" -- "$cur")); return
                fi
            done
            COMPREPLY=($(compgen -W "table json csv tsv" -- "$cur")); return ;;
        --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        --status) COMPREPLY=($(compgen -W "running complete incomplete" -- "$cur")); return ;;
        --by) COMPREPLY=($(compgen -W "commands regions" -- "$cur")); return ;;
        --regions) COMPREPLY=($(compgen -W "changed all none" -- "$cur")); return ;;
        --since|--until|--split|--baseline-since|--baseline-until|--target-since|--target-until)
            COMPREPLY=($(compgen -W "today yesterday now -10min -1h -1d -1w" -- "$cur")); return ;;
        --timeout|--only-uid|-n|--limit|--depth|--region-depth|--min-ms|--max-events|--cmd) return ;;
        --baseline-version|--target-version|--baseline-repo|--target-repo|--min-runs|--alpha|--min-change-pct|--min-change-ms)
            return ;;
    esac

    local command="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --db|--format|--color|--timeout|--only-uid) ((i++)) ;;
            -*) ;;
            *) command=${COMP_WORDS[i]}; break ;;
        esac
    done

    local flags
    case $command in
        "") COMPREPLY=($(compgen -W "$commands $global" -- "$cur")); return ;;
        sessions) flags="--since --until --cmd --all --repo --status --failed --last -n --limit --reverse --follow -f --full-sid" ;;
        show) flags="--last --cmd" ;;
        sql) flags="" ;;
        stats) flags="--since --until --cmd --all --repo --by" ;;
        advice) flags="--since --until --cmd --min-runs" ;;
        compare) flags="--since --until --split --baseline-since --baseline-until --target-since --target-until --baseline-version --target-version --baseline-repo --target-repo --cmd --all --regions --min-runs --alpha --min-change-pct --min-change-ms" ;;
        status) flags="" ;;
        doctor) flags="" ;;
        top) flags="--since --until --cmd --all --repo --limit --by --full-sid" ;;
        tree) flags="--last --cmd --depth --region-depth --min-ms --no-times --sids --uid --max-events" ;;
        export) flags="--last --format -o --output --depth --since --until --cmd --detail --rule --nickname-key --important-data --ruleset-key --nickname --ruleset --summary-message --summary-region --important-event --pii-user-name --pii-host-name --no-host-name --outcome-detail --slow-ms --slow-p99 --uid" ;;
        report) flags="--html --since --until --cmd --all --repo --limit --min-ms" ;;
    esac
    case $command in
        show|tree|export)
            if [[ $cur != -* ]]; then
                COMPREPLY=($(compgen -W "$(_trace2ctl_sids)" -- "$cur")); return
            fi ;;
    esac
    COMPREPLY=($(compgen -W "$flags $global" -- "$cur"))
}

complete -F _trace2ctl trace2ctl
