# The options `lowalloc help COMMAND` lists, one per line: the words starting with - in the first
# column of its option lines ("  -o, --output FILE  write the trace..." gives -o and --output).
# Sourced by the tests of this directory; $1 is the lowalloc command, $2 the subcommand.
help_options() {
  "$1" help "$2" | grep -E '^ {1,4}-' | sed -E 's/^ +//; s/  .*//' |
    grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | sed -E 's/^[ ,]//' | sort -u
}
