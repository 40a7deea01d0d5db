#!/bin/bash
#SBATCH --job-name="rfm_NetworkSurvey"
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=1
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=0:43:0
#SBATCH --exclusive
#SBATCH --partition=compute
#SBATCH --account=acceptance
#SBATCH --no-requeue
#SBATCH --job-name=fsaccept-local-gluster
#SBATCH --dependency=singleton
#SBATCH --comment=NetworkSurvey
. /usr/share/lmod/lmod/init/bash
module load ior/4.0.0
module load fio/3.37
export OMPI_MCA_btl=self,tcp
export OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_oob_tcp_if_include=lo
export PMIX_MCA_gds=hash
export PYTHONPATH=/work/main
fsaccept_data=/mnt/fsaccept-gluster/fsaccept/NetworkSurvey.20261207T153816-19752
fsaccept_root=/mnt/fsaccept-gluster
fsaccept_owner=.fsaccept-owner-20261207T153816-19752
fsaccept_remove_data() { if [ -f "$fsaccept_data/$fsaccept_owner" ] && [ ! -L "$fsaccept_data" ]; then ( cd -- "$fsaccept_data" && find . -mindepth 1 ! -path "./$fsaccept_owner" -delete ) && rm -f -- "$fsaccept_data/$fsaccept_owner" && { rmdir -- "$fsaccept_data" || : > "$fsaccept_data/$fsaccept_owner"; }; fi; }
trap fsaccept_remove_data EXIT
trap 'exit 143' TERM INT
fsaccept_mount="$(findmnt -n -o TARGET -T "$fsaccept_root" | head -n 1)"; [ "$fsaccept_mount" = /mnt/fsaccept-gluster ] || { echo "fsaccept-abort node $SLURMD_NODENAME: $fsaccept_root is on the mount $fsaccept_mount, not on /mnt/fsaccept-gluster"; exit 3; }
fsaccept_servers() {
  local said
  said=$(/work/main/.venv/bin/python -I -c 'import sys; sys.path.insert(0, sys.argv.pop(1)); from fsaccept.core.servers import main; main(sys.argv[1:])' /work/main GlusterFS "$1" 'd="$1/.meta/graphs/active"
ls -- "$d" > /dev/null || exit 2
for x in "$d"/*/; do
  [ "$(cat -- "${x}type" 2>/dev/null)" = protocol/client ] || continue
  c=0; grep -qx "connected = 1" -- "${x}private" 2>/dev/null && c=1
  printf '"'"'brick %s %s:%s\n'"'"' "$c" "$(cat -- "${x}options/remote-host" 2>/dev/null)" \
    "$(cat -- "${x}options/remote-subvolume" 2>/dev/null)"
done' 2>&1)
  case "$said" in (ok\ *|down\ *|unknown\ *)
    [[ "$said" == *$'\n'* ]] || { echo "$said"; return; };; esac
  echo "unknown the server probe did not answer${said:+: $(tail -n 1 <<< "$said")}"
}
fsaccept_servers_said=$(fsaccept_servers /mnt/fsaccept-gluster); [[ "$fsaccept_servers_said" != down* ]] || { echo "fsaccept-abort node $SLURMD_NODENAME: the file system is degraded: ${fsaccept_servers_said#down }"; exit 3; }
mkdir -p -- "$(dirname -- "$fsaccept_data")" || { echo "fsaccept-abort node $SLURMD_NODENAME: cannot create $(dirname -- "$fsaccept_data")"; exit 3; }
fsaccept_mount="$(findmnt -n -o TARGET -T "$(dirname -- "$fsaccept_data")" | head -n 1)"; [ "$fsaccept_mount" = /mnt/fsaccept-gluster ] || { echo "fsaccept-abort node $SLURMD_NODENAME: $(dirname -- "$fsaccept_data") is on the mount $fsaccept_mount, not on /mnt/fsaccept-gluster"; exit 3; }
mkdir -- "$fsaccept_data" && : > "$fsaccept_data/$fsaccept_owner" || { echo "fsaccept-abort node $SLURMD_NODENAME: cannot create a new $fsaccept_data"; exit 3; }
fsaccept_nodes=$(srun --nodes=$SLURM_JOB_NUM_NODES --ntasks=$SLURM_JOB_NUM_NODES --ntasks-per-node=1 bash -c 'fsaccept_servers() {
  local said
  said=$(/work/main/.venv/bin/python -I -c '"'"'import sys; sys.path.insert(0, sys.argv.pop(1)); from fsaccept.core.servers import main; main(sys.argv[1:])'"'"' /work/main GlusterFS "$1" '"'"'d="$1/.meta/graphs/active"
ls -- "$d" > /dev/null || exit 2
for x in "$d"/*/; do
  [ "$(cat -- "${x}type" 2>/dev/null)" = protocol/client ] || continue
  c=0; grep -qx "connected = 1" -- "${x}private" 2>/dev/null && c=1
  printf '"'"'"'"'"'"'"'"'brick %s %s:%s\n'"'"'"'"'"'"'"'"' "$c" "$(cat -- "${x}options/remote-host" 2>/dev/null)" \
    "$(cat -- "${x}options/remote-subvolume" 2>/dev/null)"
done'"'"' 2>&1)
  case "$said" in (ok\ *|down\ *|unknown\ *)
    [[ "$said" == *$'"'"'\n'"'"'* ]] || { echo "$said"; return; };; esac
  echo "unknown the server probe did not answer${said:+: $(tail -n 1 <<< "$said")}"
}

m="fsaccept-node-check ${SLURMD_NODENAME:-$(hostname -s)}"
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
    pages=$(fincore -n -o PAGES -- "$p" 2>/dev/null | tr -d '"'"' '"'"'); rm -f -- "$p"
    if [ "${pages:-0}" != 0 ]; then
      echo "$m bad O_DIRECT is not honoured on $mp: a direct write left $pages pages in the page cache"; exit 0; fi
    odirect="O_DIRECT honoured (no pages cached)"
  fi
  rm -f -- "$p"
fi
echo "$m ok $fs $mp $src${options:+ $options}${servers:+ $servers}${odirect:+ $odirect}"
' fsaccept-node "$fsaccept_data" /mnt/fsaccept-gluster fuse.glusterfs /mnt/fsaccept-gluster 0 2>&1)
printf "%s\n" "$fsaccept_nodes"
if printf "%s\n" "$fsaccept_nodes" | grep -q "^fsaccept-node-check [^ ]* bad "; then printf "%s\n" "$fsaccept_nodes" | grep "^fsaccept-node-check [^ ]* bad " | sed "s/^fsaccept-node-check \([^ ]*\) bad /fsaccept-abort node \1: /"; exit 3; fi
if [ "$(printf "%s\n" "$fsaccept_nodes" | grep -c "^fsaccept-node-check [^ ]* ok ")" != "$SLURM_JOB_NUM_NODES" ]; then echo "fsaccept-abort not every node of the job answered the mount check: $(printf "%s\n" "$fsaccept_nodes" | tail -n 3 | tr '\n' ' ')"; exit 3; fi
echo fsaccept-info binary_path $(command -v /work/main/.venv/bin/python)
echo fsaccept-info fstype $(findmnt -n -o FSTYPE -T "$fsaccept_data")
echo fsaccept-info mpi $( (ompi_info --version 2>/dev/null || mpichversion 2>/dev/null || echo unknown) | head -n 1)
fsaccept_out_bytes=$(stat -c %s -- rfm_job.out 2>/dev/null || echo 0); fsaccept_entries=$(find "$fsaccept_data" 2>/dev/null | wc -l)
bash -c 'echo fsaccept-rank $SLURM_PROCID $SLURMD_NODENAME; b=$(command -v "$1") || b=$1; shift; exec "$b" "$@"' fsaccept-rank /work/main/.venv/bin/python -m fsaccept.suite.network --in-dir /mnt/fsaccept-gluster/fsaccept/NetworkSurvey.20261207T153816-19752 --out . --port 17136 --ports 4 --runtime 5
fsaccept_rc=$?
fsaccept_launch=1; while [ "$fsaccept_launch" -le 2 ] && [ "$fsaccept_rc" -ne 0 ] && [ "$(find "$fsaccept_data" 2>/dev/null | wc -l)" = "$fsaccept_entries" ] && ! tail -c +$((fsaccept_out_bytes + 1)) -- rfm_job.out | grep -v "^fsaccept-rank " | grep -v "^fsaccept-retry " | grep -qv "^fsaccept-node-check [^ ]* ok "; do echo "fsaccept-retry the benchmark step ended with exit $fsaccept_rc before the benchmark printed or wrote anything: launching it once more"; echo "fsaccept-retry the benchmark step ended with exit $fsaccept_rc before the benchmark printed or wrote anything: launching it once more" >&2; sleep $(((fsaccept_launch - 1) * 5)); srun --distribution=block --kill-on-bad-exit=1 bash -c 'echo fsaccept-rank $SLURM_PROCID $SLURMD_NODENAME; b=$(command -v "$1") || b=$1; shift; exec "$b" "$@"' fsaccept-rank /work/main/.venv/bin/python -m fsaccept.suite.network --in-dir /mnt/fsaccept-gluster/fsaccept/NetworkSurvey.20261207T153816-19752 --out . --port 17136 --ports 4 --runtime 5; fsaccept_rc=$?; fsaccept_launch=$((fsaccept_launch + 1)); done
echo fsaccept-info benchmark_ended "$fsaccept_rc"
srun --nodes=$SLURM_JOB_NUM_NODES --ntasks=$SLURM_JOB_NUM_NODES --ntasks-per-node=1 bash -c 'fsaccept_servers() {
  local said
  said=$(/work/main/.venv/bin/python -I -c '"'"'import sys; sys.path.insert(0, sys.argv.pop(1)); from fsaccept.core.servers import main; main(sys.argv[1:])'"'"' /work/main GlusterFS "$1" '"'"'d="$1/.meta/graphs/active"
ls -- "$d" > /dev/null || exit 2
for x in "$d"/*/; do
  [ "$(cat -- "${x}type" 2>/dev/null)" = protocol/client ] || continue
  c=0; grep -qx "connected = 1" -- "${x}private" 2>/dev/null && c=1
  printf '"'"'"'"'"'"'"'"'brick %s %s:%s\n'"'"'"'"'"'"'"'"' "$c" "$(cat -- "${x}options/remote-host" 2>/dev/null)" \
    "$(cat -- "${x}options/remote-subvolume" 2>/dev/null)"
done'"'"' 2>&1)
  case "$said" in (ok\ *|down\ *|unknown\ *)
    [[ "$said" == *$'"'"'\n'"'"'* ]] || { echo "$said"; return; };; esac
  echo "unknown the server probe did not answer${said:+: $(tail -n 1 <<< "$said")}"
}
echo "fsaccept-servers ${SLURMD_NODENAME:-$(hostname -s)} $(fsaccept_servers "$1")"
' fsaccept-servers /mnt/fsaccept-gluster 2>/dev/null | grep "^fsaccept-servers "
(exit "$fsaccept_rc")
