#!/usr/bin/env bash
# lenlab on a real Slurm cluster (tests/slurm/localhost_cluster.sh: one node on this machine),
# end to end, against a local run of the same config (tests/slurm/slurm_test.toml, 4 runs):
#   1. --emit-slurm, submitted with sbatch, one array task cancelled while it runs (scancel);
#      the same script submitted again trains only that run; lenlab plot then gives the local
#      run's results.csv and report.md;
#   2. lenlab run --slurm, interrupted after it submitted and started again: it watches the same
#      job (no second submission) to the end and draws the same results; another plan into the
#      same folder meanwhile is refused;
#   3. a run folder the task cannot write: that run is named with lenlab's error, the others
#      finish, and the same command afterwards submits only it;
#   4. a task over its --mem is reported as such; no sbatch on PATH and sbatch refusing the job
#      (a partition that does not exist, given with --sbatch-arg or SBATCH_PARTITION) are clear
#      errors.
# report.md states how many seconds the runs took, which no two trainings share: that number is
# masked; everything else must be equal byte for byte.
#
#   tests/slurm/test_slurm.sh LENLAB WORKDIR      exit 0 passed, 77 skipped (one line why), 1 failed
set -euo pipefail
lenlab=$(realpath "$1")
work=$2
here=$(cd "$(dirname "$0")" && pwd)
config=$here/slurm_test.toml
rm -rf "$work"
mkdir -p "$work"
cd "$work"

rc=0
started=$("$here/localhost_cluster.sh" start "$work/cluster") || rc=$?
if [[ $rc != 0 ]]; then
  echo "$started"
  exit "$rc"
fi
trap '"$here/localhost_cluster.sh" stop "$work/cluster"' EXIT
eval "$started"  # export SLURM_CONF=...
export PATH=$PATH:/usr/sbin:/sbin

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "== ${SECONDS}s: $*"; }
# Waits until Slurm has no task of job $1 queued (at most $2 seconds, default 100).
wait_for_job() {
  local deadline=$((SECONDS + ${2:-100}))
  while [[ -n $(squeue -h -r -j "$1" -o %i 2>/dev/null) ]]; do
    ((SECONDS < deadline)) || fail "job $1 still queued after ${2:-100}s"
    sleep 0.2
  done
}
finished_runs() { grep -l '"status": "completed"' "$1"/runs/*/manifest.json 2>/dev/null | wc -l; }
same_as_local() {
  cmp "$work/local/results.csv" "$1/results.csv" || fail "$1/results.csv differs from the local run's"
  diff <(sed -E 's/\([0-9]+ s of training/(N s of training/' "$work/local/report.md") \
    <(sed -E 's/\([0-9]+ s of training/(N s of training/' "$1/report.md") ||
    fail "$1/report.md differs from the local run's"
}

step "the same config trained here, the reference"
"$lenlab" run "$config" --out local --jobs 2 2>local.log || fail "local run: $(cat local.log)"
[[ $(finished_runs local) == 4 ]] || fail "the local run did not finish its 4 runs"

step "--emit-slurm: limits from the cost estimate"
"$lenlab" run "$config" --out emit --emit-slurm emit-slurm 2>emit.log || fail "$(cat emit.log)"
script=$work/emit-slurm/lenlab.sbatch
grep -qx '#SBATCH --array=0-3' "$script" || fail "no --array=0-3 in $script"
grep -qx '#SBATCH --mem=1G' "$script" || fail "no --mem=1G in $script"
grep -qx '#SBATCH --time=0-00:10:00' "$script" || fail "no --time=0-00:10:00 in $script"

step "sbatch, and task 1 cancelled while it runs"
job=$(sbatch --parsable "$script")
deadline=$((SECONDS + 60))
until [[ $(squeue -h -j "${job}_1" -o %T 2>/dev/null) == RUNNING ]]; do
  ((SECONDS < deadline)) || fail "task ${job}_1 never ran"
  sleep 0.05
done
scancel "${job}_1"
wait_for_job "$job"
grep -q CANCELLED emit-slurm/run-1.log || fail "task 1 was not cancelled mid-run: $(cat emit-slurm/run-1.log)"
[[ $(finished_runs emit) == 3 ]] || fail "expected 3 finished runs after the cancel, got $(finished_runs emit)"
before=$(stat -c '%n %Y %s' emit/runs/*/results.csv)

step "the same script submitted again: only the cancelled run trains"
job=$(sbatch --parsable "$script")
wait_for_job "$job"
[[ $(finished_runs emit) == 4 ]] || fail "the resubmitted script did not finish the 4th run"
after=$(stat -c '%n %Y %s' emit/runs/*/results.csv)
[[ $(comm -23 <(echo "$before" | sort) <(echo "$after" | sort)) == "" ]] ||
  fail "a finished run was trained again: before $before, after $after"
"$lenlab" plot emit 2>plot.log || fail "lenlab plot: $(cat plot.log)"
same_as_local "$work/emit"

step "lenlab run --slurm, interrupted after submitting, started again"
"$lenlab" run "$config" --out watch --slurm --slurm-poll 0.3 2>watch1.log &
watcher=$!
deadline=$((SECONDS + 30))
until [[ -s watch/slurm/job.json ]]; do
  ((SECONDS < deadline)) || fail "lenlab run --slurm wrote no job.json: $(cat watch1.log)"
  sleep 0.05
done
kill -TERM "$watcher"  # (a background job of a script ignores SIGINT)
wait "$watcher" || true
first_job=$(sed -E 's/.*"job":"([0-9]+)".*/\1/' watch/slurm/job.json)
rc=0  # another plan (--seeds 2) into the same folder while that job is queued: refused
"$lenlab" run "$config" --out watch --slurm --seeds 2 2>other_plan.log || rc=$?
[[ $rc == 2 ]] || fail "another plan while job $first_job is queued: expected exit 2, got $rc"
grep -q "Slurm job $first_job .* trains another plan" other_plan.log || fail "$(cat other_plan.log)"
"$lenlab" run "$config" --out watch --slurm --slurm-poll 0.3 2>watch2.log ||
  fail "the second lenlab run --slurm failed: $(cat watch2.log)"
grep -q "watching Slurm job $first_job" watch2.log || fail "it did not watch job $first_job: $(cat watch2.log)"
grep -q "^submitted Slurm job" watch2.log && fail "it submitted again: $(cat watch2.log)"
same_as_local "$work/watch"
"$lenlab" run "$config" --out watch --slurm --slurm-poll 0.3 2>watch3.log || fail "$(cat watch3.log)"
grep -q "all 4 runs are finished" watch3.log || fail "a finished job was not recognized: $(cat watch3.log)"

step "a run folder the task cannot write"
bad_run=$(ls local/runs | head -n 1)
mkdir -p unwritable/runs
echo "not a folder" >"unwritable/runs/$bad_run"
rc=0
"$lenlab" run "$config" --out unwritable --slurm --slurm-poll 0.3 2>unwritable1.log || rc=$?
[[ $rc == 1 ]] || fail "expected exit 1, got $rc: $(cat unwritable1.log)"
grep -q "1 of 4 runs did not finish" unwritable1.log || fail "$(cat unwritable1.log)"
grep -q "run $bad_run (array task [0-9]*, log .*): lenlab: error: .*$bad_run" unwritable1.log ||
  fail "the failed run is not named with lenlab's error: $(cat unwritable1.log)"
[[ $(finished_runs unwritable) == 3 ]] || fail "the other 3 runs did not finish"
rm "unwritable/runs/$bad_run"
"$lenlab" run "$config" --out unwritable --slurm --slurm-poll 0.3 --sbatch-arg=--partition=debug \
  2>unwritable2.log ||
  fail "$(cat unwritable2.log)"
grep -q "1 array task(s) of 4 runs (3 already finished)" unwritable2.log || fail "$(cat unwritable2.log)"
same_as_local "$work/unwritable"

step "a task over its --mem"
sed -e 's/^steps = .*/steps = 100000/' -e 's/^values = .*/values = ["nope"]/' "$config" >long.toml
rc=0
"$lenlab" run long.toml --out memory --slurm --slurm-poll 0.3 --sbatch-arg=--mem=8M 2>memory.log ||
  rc=$?
[[ $rc == 1 ]] || fail "expected exit 1, got $rc: $(cat memory.log)"
grep -q "Slurm killed it for using more memory than its --mem=8M (from --sbatch-arg)" memory.log ||
  fail "the memory kill is not reported as such: $(cat memory.log)"

step "clear errors: no sbatch on PATH, sbatch refusing the job"
rc=0
PATH=/nonexistent "$lenlab" run "$config" --out nosbatch --slurm 2>nosbatch.log || rc=$?
[[ $rc == 2 ]] || fail "no sbatch: expected exit 2, got $rc"
grep -q "there is no sbatch on PATH" nosbatch.log || fail "$(cat nosbatch.log)"
[[ ! -e nosbatch ]] || fail "no sbatch: the output folder was written"
rc=0
"$lenlab" run "$config" --out refused --slurm --sbatch-arg=--partition=nosuch 2>refused.log || rc=$?
[[ $rc == 2 ]] || fail "refused: expected exit 2, got $rc"
grep -q "sbatch refused the job .*invalid partition" refused.log || fail "$(cat refused.log)"
rc=0  # sbatch's own environment variables reach it too (SBATCH_PARTITION, SBATCH_ACCOUNT, ...)
SBATCH_PARTITION=nosuch "$lenlab" run "$config" --out refused2 --slurm 2>refused2.log || rc=$?
[[ $rc == 2 ]] || fail "SBATCH_PARTITION: expected exit 2, got $rc"
grep -q "invalid partition" refused2.log || fail "$(cat refused2.log)"

step "passed"
