#!/usr/bin/env bash
# LM-Infinite's streaming claim (paper 001 §5) on the text-quick runs: each encoding's seed-1 run
# of `lenlab run configs/text-quick.toml --figures text_pe --seeds 1 --out TEXT` reads
#   * the first 65 536 characters of the corpus's test split, plain and with the Λ-mask (n_local =
#     l_train, one global token, and for the relative encodings the distance cap), the same
#     positions both ways: cross-entropy per 4 096 positions;
#   * the whole corpus (4.15 M characters of the King James Bible) with the Λ-mask: per 65 536;
#   * RoPE with the Λ-mask and cap, 100 000 and 1 000 000 characters: the peak resident memory of
#     the two (each its own process) and the time per token along the stream.
# Then `scripts/check_docs.py --snapshot stream OUT` copies each stream's stream.json and
# stream.csv into docs/data/stream/. About 15 minutes on one core (the plain streams are
# quadratic: a minute or two each).
#   usage: scripts/stream_study.sh LENLAB TEXT OUT
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: scripts/stream_study.sh LENLAB TEXT OUT (TEXT: a lenlab run configs/text-quick.toml --figures text_pe --out folder)" >&2
  exit 2
fi
lenlab=$1 text=$2 out=$3
mkdir -p "$out"
run_of() {  # the seed-1 run of an encoding
  local runs=("$text"/runs/text-"$1"-identity-L64-s1-*)
  [ -d "${runs[0]}" ] || { echo "no seed-1 $1 run in $text/runs" >&2; exit 2; }
  echo "${runs[0]}"
}
stream() {  # NAME RUN FLAGS...
  local name=$1 run=$2
  shift 2
  "$lenlab" eval "$run" --out "$out/$name" --overwrite "$@" >"$out/$name.log" 2>&1
  tail -1 "$out/$name.log"
}
for pe in rope alibi kerple nope sinusoidal; do
  run=$(run_of "$pe")
  lambda=(--n-local train --n-global 1)
  case $pe in rope | alibi | kerple) lambda+=(--distance-cap train) ;; esac
  stream "$pe-plain-64k" "$run" --stream test --stream-tokens 65536 --stream-chunk 4096
  stream "$pe-lambda-64k" "$run" --stream test --stream-tokens 65536 --stream-chunk 4096 "${lambda[@]}"
  if [ "$pe" != sinusoidal ]; then  # its table by position grows with the stream: 4 GB for the book
    stream "$pe-lambda-book" "$run" --stream all --stream-chunk 65536 "${lambda[@]}"
  fi
done
rope=$(run_of rope)
for n in 100000 1000000; do
  stream "rope-lambda-$n" "$rope" --stream all --stream-tokens $n --stream-chunk 10000 \
    --n-local train --n-global 1 --distance-cap train
done
