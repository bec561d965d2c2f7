#!/usr/bin/env bash
# Starts (or stops) a one-machine Slurm cluster on localhost: munge, slurmctld and slurmd, as
# root, with its state under STATE_DIR (default /tmp/pipeline-slurm). For trying the array
# script and for CI; a real cluster has its own configuration.
#
#   deploy/slurm/local-cluster.sh start   # installs slurm-wlm and munge if missing, starts them
#   deploy/slurm/local-cluster.sh stop
set -euo pipefail
state=${STATE_DIR:-/tmp/pipeline-slurm}
action=${1:-start}

stop() {
  [ -f "$state/slurmd.pid" ] && kill "$(cat "$state/slurmd.pid")" 2>/dev/null || true
  [ -f "$state/slurmctld.pid" ] && kill "$(cat "$state/slurmctld.pid")" 2>/dev/null || true
  [ -f "$state/munged.pid" ] && kill "$(cat "$state/munged.pid")" 2>/dev/null || true
  sleep 1
  pkill -f "slurmd -f $state/slurm.conf" 2>/dev/null || true
  pkill -f "slurmctld -f $state/slurm.conf" 2>/dev/null || true
  pkill -f "munged .*--socket=$state/munge/socket" 2>/dev/null || true
}

if [ "$action" = stop ]; then stop; exit 0; fi
[ "$(id -u)" = 0 ] || { echo "local-cluster.sh: run as root (slurmd starts jobs as their users)" >&2; exit 1; }
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  apt-get install -y -qq slurm-wlm munge >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq slurm-wlm munge >/dev/null; }
fi
stop
mkdir -p "$state"/{spool,ctld,log,munge}
chmod 700 "$state/munge"

# munge: its own key and socket, so a machine's existing munge is left alone.
[ -f "$state/munge/munge.key" ] || dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$state/munge/munge.key"
munged --force --key-file="$state/munge/munge.key" --socket="$state/munge/socket" \
  --pid-file="$state/munged.pid" --log-file="$state/log/munged.log" --seed-file="$state/munge/seed"

cpus=$(nproc)
memory=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
cat > "$state/slurm.conf" <<CONF
ClusterName=pipeline
SlurmctldHost=localhost
AuthType=auth/munge
CryptoType=crypto/munge
# cred_expire is also how long a requeued job waits before it starts again (120 s by default).
AuthInfo=socket=$state/munge/socket,cred_expire=10
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
InactiveLimit=0
KillWait=5
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$state/slurm.conf
slurmctld -f "$state/slurm.conf"
slurmd -f "$state/slurm.conf"
# Wait, bounded, for the node to be idle.
for _ in $(seq 60); do
  if grep -qE '^(idle|mix|alloc)' <<< "$(sinfo -h -o '%t' 2>/dev/null)"; then
    echo "slurm: one-machine cluster up (SLURM_CONF=$state/slurm.conf)"
    exit 0
  fi
  scontrol update nodename=localhost state=resume >/dev/null 2>&1 || true
  sleep 1
done
echo "local-cluster.sh: the node did not come up; see $state/log" >&2
tail -n 20 "$state/log/slurmctld.log" "$state/log/slurmd.log" >&2 || true
exit 1
