#!/bin/bash
# A real single-node Slurm cluster on this machine, for jeirt's Slurm tests and
# for trying the cluster workflow (docs/cluster.md) without a cluster:
#
#   scripts/slurm/local-cluster.sh start    # install if needed, configure, start, wait for the node
#   export SLURM_CONF=/tmp/jeirt-slurm/slurm.conf   # what start prints; sbatch, squeue, ... use it
#   scripts/slurm/local-cluster.sh status
#   scripts/slurm/local-cluster.sh stop     # stops only the daemons start started
#
# It needs root (the daemons run as root, as on a CI machine without systemd)
# and Debian's slurm-wlm and munge packages, which start installs with apt-get
# when they are missing. Everything it writes is under one folder,
# $JEIRT_SLURM_DIR (default /tmp/jeirt-slurm): slurm.conf and gres.conf, its
# own munge key (1,024 random bytes, mode 400, owner munge) and socket, the
# daemons' state, spool, pid and log files. /etc/slurm and /etc/munge are left
# alone. The node declares GPUS (default 2) generic resources of type gpu
# (stand-in device files, see write_config), so jobs asking for --gres=gpu:1
# are scheduled (and run on the CPU: there is no GPU behind them). Set PORT
# to run it beside another cluster (default 6817, and PORT+1 for slurmd).
set -euo pipefail

dir="${JEIRT_SLURM_DIR:-/tmp/jeirt-slurm}"
gpus="${GPUS:-2}"
# slurmctld listens on PORT, slurmd on PORT+1 (Slurm's defaults: 6817, 6818).
port="${PORT:-6817}"
conf="$dir/slurm.conf"
host="$(hostname -s)"

say() { echo "local-cluster: $*" >&2; }
die() { say "$*"; exit 1; }

# alive PIDFILE NAME: the pid in PIDFILE when that process runs and is NAME.
alive() {
  local pid
  [[ -f "$1" ]] || return 1
  pid="$(tr -dc 0-9 <"$1")"
  [[ -n "$pid" && -r "/proc/$pid/comm" ]] || return 1
  [[ "$(cat "/proc/$pid/comm")" == "$2" ]] || return 1
  echo "$pid"
}

install() {
  local missing=()
  command -v slurmctld >/dev/null 2>&1 || missing+=(slurm-wlm)
  command -v munged >/dev/null 2>&1 || missing+=(munge)
  ((${#missing[@]} == 0)) && return 0
  [[ "$(id -u)" == 0 ]] || die "${missing[*]} not installed, and installing needs root"
  command -v apt-get >/dev/null 2>&1 || die "${missing[*]} not installed, and there is no apt-get to install them"
  say "installing ${missing[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || die "apt-get update failed"
  apt-get install -y -qq slurm-wlm munge >&2 || die "apt-get install slurm-wlm munge failed"
}

write_config() {
  local mem cpus
  cpus="$(nproc)"
  # What slurmd finds must be at least what the node declares: 90% of the memory.
  mem="$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)"
  mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
  chmod 755 "$dir"
  cat >"$conf.tmp" <<EOF
# Written by scripts/slurm/local-cluster.sh: a single-node cluster for tests.
ClusterName=jeirt-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket.2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
# Finished jobs stay visible to squeue and scontrol for an hour (there is no
# accounting daemon for sacct), and a cancelled task is killed within 2 s.
MinJobAge=3600
KillWait=2
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=gpu:$gpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$conf.tmp" "$conf"
  # Slurm 22.05 drops a gpu GRES without File= ("Removing file-less GPU"),
  # so each GPU is a device node aliasing /dev/null (major 1, minor 3): the
  # scheduler counts and assigns them (CUDA_VISIBLE_DEVICES is set), nothing
  # opens them. Where mknod is not allowed, plain files: slurmd logs that
  # they are not devices but keeps the count.
  local i
  for ((i = 0; i < gpus; i++)); do
    [[ -e "$dir/gpu$i" ]] || mknod "$dir/gpu$i" c 1 3 2>/dev/null || : >"$dir/gpu$i"
  done
  echo "NodeName=$host Name=gpu File=$dir/gpu[0-$((gpus - 1))]" >"$dir/gres.conf"
  if [[ ! -s "$dir/munge/munge.key" ]]; then
    head -c 1024 /dev/urandom >"$dir/munge/munge.key.tmp"
    mv "$dir/munge/munge.key.tmp" "$dir/munge/munge.key"
  fi
  chmod 700 "$dir/munge"
  chown munge:munge "$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
}

idle() {
  SLURM_CONF="$conf" sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle
}

start() {
  [[ "$(id -u)" == 0 ]] || die "start needs root (the daemons run as root)"
  install
  if alive "$dir/slurmctld.pid" slurmctld >/dev/null && alive "$dir/slurmd.pid" slurmd >/dev/null && idle; then
    say "already running"
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  write_config
  if ! alive "$dir/munge/munged.pid" munged >/dev/null; then
    munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket.2" \
      --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
      --seed-file="$dir/munge/munged.seed" || die "munged did not start; see $dir/munge/munged.log"
  fi
  if ! alive "$dir/slurmctld.pid" slurmctld >/dev/null; then
    SLURM_CONF="$conf" slurmctld -f "$conf" || die "slurmctld did not start; see $dir/slurmctld.log"
  fi
  if ! alive "$dir/slurmd.pid" slurmd >/dev/null; then
    SLURM_CONF="$conf" slurmd -f "$conf" || die "slurmd did not start; see $dir/slurmd.log"
  fi
  local waited=0
  until idle; do
    # A daemon that exits (a port taken by another cluster, a bad line in
    # the configuration) fails the start at once.
    alive "$dir/slurmctld.pid" slurmctld >/dev/null || { tail -n 5 "$dir/slurmctld.log" >&2 || true; die "slurmctld exited; see $dir/slurmctld.log"; }
    alive "$dir/slurmd.pid" slurmd >/dev/null || { tail -n 5 "$dir/slurmd.log" >&2 || true; die "slurmd exited; see $dir/slurmd.log"; }
    if ((waited >= ${WAIT:-60})); then
      SLURM_CONF="$conf" sinfo -N >&2 || true
      tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
      die "the node is not idle after ${WAIT:-60} s"
    fi
    sleep 1
    waited=$((waited + 1))
  done
  say "node $host idle ($(nproc) CPUs, gpu:$gpus) after ${waited} s; configuration in $dir"
  echo "export SLURM_CONF=$conf"
}

stop() {
  local pid name file stopped=0
  for entry in slurmd:"$dir/slurmd.pid" slurmctld:"$dir/slurmctld.pid" munged:"$dir/munge/munged.pid"; do
    name="${entry%%:*}" file="${entry#*:}"
    if pid="$(alive "$file" "$name")"; then
      kill "$pid"
      for _ in $(seq 50); do
        [[ -d "/proc/$pid" ]] || break
        sleep 0.1
      done
      if [[ -d "/proc/$pid" ]]; then
        say "$name ($pid) did not stop in 5 s; killing it"
        kill -9 "$pid" || true
      fi
      stopped=$((stopped + 1))
    fi
  done
  say "stopped $stopped daemons"
}

status() {
  local rc=0 pid name file
  for entry in munged:"$dir/munge/munged.pid" slurmctld:"$dir/slurmctld.pid" slurmd:"$dir/slurmd.pid"; do
    name="${entry%%:*}" file="${entry#*:}"
    if pid="$(alive "$file" "$name")"; then
      echo "$name: running (pid $pid)"
    else
      echo "$name: not running"
      rc=1
    fi
  done
  if ((rc == 0)); then
    SLURM_CONF="$conf" sinfo -N -o '%N %T %c %G' || rc=1
    echo "export SLURM_CONF=$conf"
  fi
  return "$rc"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
  echo "usage: $0 start|stop|status (folder: \$JEIRT_SLURM_DIR, default /tmp/jeirt-slurm)" >&2
  exit 2
  ;;
esac
