#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the tests (tests/slurm/test_slurm.sh) and for
# trying lenlab's Slurm support by hand: munged, slurmctld and slurmd of Debian's slurm-wlm, every
# file (munge key, slurm.conf, spool and state, logs, sockets) inside one folder, nothing in /etc.
#
#   tests/slurm/localhost_cluster.sh start DIR   # prints: export SLURM_CONF=DIR/slurm.conf
#   tests/slurm/localhost_cluster.sh stop DIR
#
# The node has 2 CPUs and 2 GiB for jobs, memory is enforced (a task over its --mem is killed,
# OUT_OF_MEMORY), and finished jobs stay visible to scontrol for 10 minutes. Exit 77 (the tests'
# "skipped") with one line when the programs are not installed (scripts/install-deps.sh installs
# them: slurm-wlm, munge) or the daemons need root.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [[ -z $cmd || -z $dir ]]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi

stop_cluster() {
  local name pid
  for name in slurmd slurmctld munged; do
    [[ -f $dir/$name.pid ]] || continue
    pid=$(cat "$dir/$name.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/$name.pid"
  done
}

if [[ $cmd == stop ]]; then
  stop_cluster
  exit 0
fi
[[ $cmd == start ]] || { echo "unknown command '$cmd': choose start or stop" >&2; exit 2; }

for program in munged slurmctld slurmd sbatch squeue scontrol scancel; do
  if ! PATH=$PATH:/usr/sbin:/sbin command -v "$program" >/dev/null; then
    echo "SKIP: no $program on PATH (apt-get install slurm-wlm munge; scripts/install-deps.sh does)"
    exit 77
  fi
done
if [[ $(id -u) != 0 ]]; then
  echo "SKIP: slurmd runs jobs as their users and needs root; run the Slurm test as root"
  exit 77
fi
export PATH=$PATH:/usr/sbin:/sbin

dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
mkdir -p "$dir"/{spool,state,munge}
chmod 700 "$dir/munge"

# Two free TCP ports for slurmctld and slurmd (a system Slurm may hold the defaults).
read -r ctld_port slurmd_port < <(python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
PY
)

dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" \
  --force 2>>"$dir/munged.log"

memory_mb=2048
cat >"$dir/slurm.conf" <<CONF
# Written by tests/slurm/localhost_cluster.sh: one node, this machine.
ClusterName=lenlab-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MinJobAge=600
InactiveLimit=0
KillWait=5
NodeName=lenlab0 NodeAddr=127.0.0.1 NodeHostname=$(hostname -s) CPUs=2 RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=lenlab0 Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf

slurmctld -i -f "$SLURM_CONF" 2>>"$dir/slurmctld.log"
slurmd -N lenlab0 -f "$SLURM_CONF" 2>>"$dir/slurmd.log"

# Ready when the node takes jobs.
for _ in $(seq 100); do
  state=$(sinfo -h -n lenlab0 -o %t 2>/dev/null || true)
  if [[ $state == idle ]]; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "the localhost Slurm did not come up (node state '${state:-none}'); logs in $dir:" >&2
tail -n 5 "$dir"/*.log >&2 || true
stop_cluster
exit 1
