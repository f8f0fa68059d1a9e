# bash completion for lowalloc(1). Installed as share/bash-completion/completions/lowalloc, where
# bash-completion loads it on first use; or source it from ~/.bashrc.
#
# Completes the subcommands, each one's options, the values of --format, --sort and --inuse,
# trace files (*.trace) where a trace is read (after "--" too, where a word that starts with -
# is a file), and after `lowalloc run --` a program, then its arguments as files. Kept in step
# with `lowalloc help COMMAND` by tests/cli (completion_test.sh).

# The words of each subcommand's options.
_lowalloc_options() {
  case $1 in
    run) echo "-o --output --no-fork --follow-exec --depth -q --quiet -h --help" ;;
    report) echo "--format -o --output --top --sort --inuse --no-symbols --no-fold --lines --objects --processes --debug-path -h --help" ;;
    advise) echo "--format --top --no-measure --debug-path -h --help" ;;
    diff) echo "--format --top --all --no-symbols --debug-path -h --help" ;;
    check)
      echo "--max-allocations --max-bytes --max-temporary --max-leaked-bytes --max-peak-bytes" \
        "--site --baseline --max-increase --include-runtime --allow-incomplete --junit --no-symbols" \
        "--debug-path -q --quiet -h --help"
      ;;
  esac
}

# COMPREPLY += the files matching $2 (a glob, or empty for all) and the directories, under $1.
_lowalloc_files() {
  local cur=$1 pattern=$2 IFS=$'\n'
  compopt -o filenames 2>/dev/null
  if [[ -n $pattern ]]; then
    COMPREPLY+=($(compgen -f -X "!$pattern" -- "$cur") $(compgen -d -- "$cur"))
  else
    COMPREPLY+=($(compgen -f -- "$cur"))
  fi
}

_lowalloc() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev="" i
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # "--format=js" is split at '=' (COMP_WORDBREAKS): complete the value of the option before it.
  if [[ $cur == "=" ]]; then
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    cur=""
  elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  COMPREPLY=()

  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "run report advise diff check help --version --help" -- "$cur"))
    return 0
  fi
  local command=${COMP_WORDS[1]}

  case $command in
    help | --help | -h)
      ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "run report advise diff check" -- "$cur"))
      return 0
      ;;
    run)
      # PROGRAM is the word after "--", or the first word that is not an option or its value;
      # then come its arguments (files).
      local program=0
      for ((i = 2; i < COMP_CWORD; ++i)); do
        case ${COMP_WORDS[i]} in
          --) program=$((i + 1)); break ;;
          -o | --output | --depth) ((++i)) ;;
          -*) ;;
          *) program=$i; break ;;
        esac
      done
      if ((program != 0 && COMP_CWORD > program)); then
        _lowalloc_files "$cur" ""
        return 0
      fi
      if ((program == 0)); then
        case $prev in
          -o | --output) _lowalloc_files "$cur" ""; return 0 ;;
          --depth) return 0 ;;
        esac
      fi
      if ((program == COMP_CWORD)) || [[ $cur != -* ]]; then
        if [[ $cur == */* ]]; then
          _lowalloc_files "$cur" ""
        else
          compopt -o filenames 2>/dev/null
          COMPREPLY=($(compgen -c -- "$cur"))
        fi
        return 0
      fi
      ;;
    report | advise | diff | check)
      # "--" ends the options: every word after it is a trace file.
      for ((i = 2; i < COMP_CWORD; ++i)); do
        if [[ ${COMP_WORDS[i]} == -- ]]; then
          _lowalloc_files "$cur" "*.trace"
          return 0
        fi
      done
      case $prev in
        --format)
          if [[ $command == report ]]; then
            COMPREPLY=($(compgen -W "text json folded html pprof speedscope" -- "$cur"))
          else
            COMPREPLY=($(compgen -W "text json" -- "$cur"))
          fi
          return 0
          ;;
        --inuse)
          [[ $command == report ]] && COMPREPLY=($(compgen -W "end peak" -- "$cur"))
          return 0
          ;;
        --sort)
          [[ $command == report ]] &&
            COMPREPLY=($(compgen -W "allocations bytes temporary leaked peak" -- "$cur"))
          return 0
          ;;
        --baseline) _lowalloc_files "$cur" "*.trace"; return 0 ;;
        --junit) _lowalloc_files "$cur" ""; return 0 ;;
        -o | --output)
          [[ $command == report ]] && _lowalloc_files "$cur" ""
          return 0
          ;;
        --debug-path)
          compopt -o filenames 2>/dev/null
          COMPREPLY=($(compgen -d -- "$cur"))
          return 0
          ;;
        --top | --site | --max-* ) return 0 ;;
      esac
      ;;
    *) return 0 ;;
  esac

  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_lowalloc_options "$command") --" -- "$cur"))
  else
    _lowalloc_files "$cur" "*.trace"
  fi
  return 0
}
complete -F _lowalloc lowalloc
