"""What every benchmark job's script holds besides the benchmark, and what it leaves
behind: the markers its lines start with, the per-node check run before the benchmark,
the steps that keep the benchmark's exit status, and the owned-data ledger (the data
directories this harness's jobs created, so a later session resumes an ended run's
removal only for those)."""

from __future__ import annotations

import socket

from reframe.core.logging import getlogger

from fsaccept.core import guards
# The markers of a job's output, read again by the sign-off: core's (one place).
from fsaccept.core.joboutput import (INFO_MARKER, NODE_CHECK_MARKER,  # noqa: F401
                                     RANK_MARKER, RETRY_MARKER)
from fsaccept.core.paths import OWNED_DATA_DIR
from fsaccept.suite import owned


#: Names this ReFrame run's files, so that two runs on one file system never
#: share (or remove) each other's files (its form: ``owned.RUN_ID_FORM``).
RUN_ID = owned.new_run_id()
#: Starts the line a job prints when it refuses to run its benchmark.
ABORT_MARKER = "fsaccept-abort"
#: Run once on every node of the job before the benchmark (``bash -c`` with
#: $1 = data directory, $2 = target root, $3 = expected type, $4 = expected mount point,
#: $5 = 1 to probe O_DIRECT): prints "<marker> NODE ok ..." or "<marker> NODE bad WHY".
#: Nothing is written on a node whose mount is wrong, or whose client does not reach
#: every storage server (the file system's ``fsaccept_servers``, prepended when it has
#: one: fsaccept.core.servers), or whose mount lacks an option the reference requires or
#: has one it forbids (``fsaccept_mount_options``, prepended when the reference declares
#: ``mount_options``: fsaccept.core.mountopts; its answer's ``options=... [client=...]``
#: is recorded).  The O_DIRECT probe writes 1,000
#: bytes with O_DIRECT into the data directory: storage that really receives them refuses
#: the misaligned write at once (EINVAL); a client that caches "direct" writes accepts
#: it and fails only at close (GlusterFS's write-behind without
#: performance.strict-o-direct), or keeps pages of an aligned direct write in the page
#: cache (fincore): either way the figure would not be a direct-I/O figure.
NODE_CHECK_SCRIPT = r"""
m="$NODE_CHECK_MARKER ${SLURMD_NODENAME:-$(hostname -s)}"
read -r fs mp src <<< "$(findmnt -n -o FSTYPE,TARGET,SOURCE -T "$2" | head -n 1)"
if [ "$fs" != "$3" ] || [ "$mp" != "$4" ]; then
  echo "$m bad $2 is not on $3 ($4) but on ${fs:-nothing} (${mp:-?})"; exit 0; fi
if ! err=$(stat -c %i -- "$1" 2>&1 >/dev/null); then
  echo "$m bad cannot reach $1: ${err##*: }"; exit 0; fi
servers=""
if declare -F fsaccept_servers >/dev/null; then
  servers=$(fsaccept_servers "$mp")
  if [[ "$servers" == down* ]]; then
    echo "$m bad the file system is degraded: ${servers#down }"; exit 0; fi
  servers="(${servers#* })"
fi
options=""
if declare -F fsaccept_mount_options >/dev/null; then
  options=$(fsaccept_mount_options "$2" "$mp" "$fs")
  if [[ "$options" != ok\ * ]]; then
    echo "$m ${options:-bad the mount-options check said nothing}"; exit 0; fi
  options="${options#ok }"
fi
odirect=""
if [ "$5" = 1 ]; then
  p="$1/.fsaccept-odirect-probe.${SLURMD_NODENAME:-$(hostname -s)}"
  out=$(head -c 1000 /dev/urandom | dd of="$p" bs=1000 count=1 oflag=direct 2>&1); rc=$?
  if [ $rc -ne 0 ] && [[ "$out" == *"error writing"* ]]; then odirect="O_DIRECT honoured"
  elif [ $rc -ne 0 ]; then
    rm -f -- "$p"
    echo "$m bad O_DIRECT is not honoured on $mp: a misaligned direct write was accepted and failed only at close (${out##*: }): the client caches direct writes (GlusterFS: set performance.strict-o-direct on)"; exit 0
  else
    dd if=/dev/urandom of="$p" bs=1M count=4 oflag=direct 2>/dev/null
    pages=$(fincore -n -o PAGES -- "$p" 2>/dev/null | tr -d ' '); rm -f -- "$p"
    if [ "${pages:-0}" != 0 ]; then
      echo "$m bad O_DIRECT is not honoured on $mp: a direct write left $pages pages in the page cache"; exit 0; fi
    odirect="O_DIRECT honoured (no pages cached)"
  fi
  rm -f -- "$p"
fi
echo "$m ok $fs $mp $src${options:+ $options}${servers:+ $servers}${odirect:+ $odirect}"
"""
#: The job's last steps keep the benchmark step's exit status and end with it.
KEEP_STATUS = "fsaccept_rc=$?"
#: Starts the job line where the crashed-launch retry takes its snapshot of the job's
#: output and data; lines that are not the benchmark's go before it.
RETRY_SNAPSHOT = "fsaccept_out_bytes="
END_WITH_STATUS = '(exit "$fsaccept_rc")'
#: Datasets this ReFrame session has written (or will write) for a later read and
#: not yet read: the capacity guard counts them with every test's own data.
KEPT_DATASETS = guards.KeptData()


def remove_data(directory: str) -> owned.Removal:
    """Remove a data directory this run created (never another), and stop counting it;
    what became of it (what was left, and why)."""
    removal = owned.remove_owned(directory, RUN_ID)
    if removal.gone:
        KEPT_DATASETS.release(directory)
    return removal


#: Where this harness records, outside every data directory, the data directories its
#: jobs create (``owned.record_owned``): a later session resumes an ended run's removal
#: only for those (``owned.sweep_owned``).
OWNED_LEDGER = OWNED_DATA_DIR
#: The sweep of earlier runs' unfinished removals: once per session, by the first test
#: set up (what it left is reported by that test).
_SWEPT: list[owned.Removal] | None = None


#: Whether Slurm no longer runs or holds a job (in doubt: not ended).
_job_ended = owned.slurm_job_ended


def sweep_earlier_runs() -> list[owned.Removal]:
    """Resume, once per session, the removals earlier runs of this harness (on this host)
    left unfinished: a session interrupted before its sanity stages, a removal that
    failed (see ``owned.sweep_owned`` for what proves a directory is theirs)."""
    global _SWEPT
    if _SWEPT is None:
        try:
            _SWEPT = owned.sweep_owned(OWNED_LEDGER, RUN_ID, socket.gethostname(),
                                        owned.run_ended, _job_ended)
        except OSError as err:
            _SWEPT = [owned.Removal(str(OWNED_LEDGER), "incomplete", 0,
                                     f"the sweep of earlier runs' data failed: {err}")]
        for removal in _SWEPT:
            getlogger().warning(
                f"fsaccept: data of an earlier run: {removal.left}" if removal.left else
                f"fsaccept: removed {removal.directory}, left by an earlier run")
        return _SWEPT
    return []


