# The command line of the scripts in scripts/ (sourced by each; not run on its own).
# A script's usage is the comment at its top: from its second line to its first line
# that is not a comment.  Before anything else runs, each script calls
#   help_or_run "$@"             # -h or --help anywhere: the usage, exit 0
# and, for a wrong argument,
#   bad MESSAGE                  # NAME: error: MESSAGE, then the usage, on stderr; exit 2
# A script that passes its other arguments on to ReFrame checks them first with
#   check_reframe_options ARG... # ReFrame's own parser (fsaccept system --reframe-options):
#                                # an option neither takes is `bad`; runs nothing

usage() { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; }

bad() {
  echo "${0##*/}: error: $*" >&2
  usage >&2
  exit 2
}

help_or_run() {
  local arg
  for arg in "$@"; do
    case "$arg" in -h|--help) usage; exit 0 ;; esac
  done
}

check_reframe_options() {
  if (($#)) && ! "$repo/.venv/bin/fsaccept" system --reframe-options "$@"; then
    bad "not an option of this script nor of ReFrame: $*"
  fi
}
