#!/usr/bin/env bash
# On a terminal, a backfill (run --exit-when-idle) shows one status line of
# records read, what is left, the rate and the time left, as replay does,
# instead of a line per batch, and ends with one summary line; replay's
# line no longer opens with "0 offsets/s, ETA 0 s" (rate and ETA appear
# once they can be measured). Off a terminal, or in json, nothing of it.
# `script` gives ktally a pseudo-terminal.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
command -v script > /dev/null || fail "script not found (util-linux; scripts/setup installs it)"

db_uri=$(kt_new_db progress)
topic=$(kt_new_topic progress 4)
kt_gen "$topic" --lines 300000 --seed 184 --truth "$WORK/truth" > "$WORK/gen"
on_tty() {  # on_tty OUT COMMAND...: COMMAND on a pseudo-terminal, its output in OUT
  local out=$1; shift
  script -q -e -c "$(printf '%q ' "$@")" "$WORK/typescript" > /dev/null \
    || { cat "$WORK/typescript" >&2; fail "$* failed on a terminal"; }
  tr '\r' '\n' < "$WORK/typescript" | sed 's/\x1b\[K//g' > "$out"
}

on_tty "$WORK/run.tty" "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  --exit-when-idle --interval 0 --max-per-partition 3000
kt_check_counts "$(kt_db_name "$db_uri")" "$WORK/truth"
grep -qE "^job $topic: [0-9]+ records, [0-9]+ left, [0-9]+ records/s, ETA [0-9]+ (s|min)" "$WORK/run.tty" \
  || { cat "$WORK/run.tty" >&2; fail "run: no progress line with a rate and an ETA"; }
grep -qE "^job $topic: 300000 records, 0 left" "$WORK/run.tty" || fail "run: the last progress line is not at 0 left"
grep -q "ktally info: job $topic: done: 300000 records, 300000 lines, " "$WORK/run.tty" || fail "run: no summary line"
if grep -q "batch [0-9]*: " "$WORK/run.tty"; then fail "run: batch lines under the progress line"; fi
if grep -qE " 0 records/s|ETA 0 s" "$WORK/run.tty"; then fail "run: a rate or ETA of nothing"; fi

# The whole topic again, long enough to be measured on the way.
reply=$(kt_watermarks "$topic")
from=$(for pw in $reply; do printf '%s:0,' "${pw%%:*}"; done)
until=$(for pw in $reply; do printf '%s:%s,' "${pw%%:*}" "${pw##*:}"; done)
on_tty "$WORK/replay.tty" "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  --from "${from%,}" --until "${until%,}" --max-per-partition 2500
grep -qE "^replay: [0-9]+/300000 offsets \([0-9]+%\), [0-9]+ offsets/s, ETA [0-9]+ s" "$WORK/replay.tty" \
  || { cat "$WORK/replay.tty" >&2; fail "replay: no progress with a rate and an ETA"; }
grep -q "^replay: 300000/300000 offsets (100%)" "$WORK/replay.tty" || fail "replay: never at 100%"
if grep -qE " 0 offsets/s|ETA 0 s" "$WORK/replay.tty"; then
  grep -E " 0 offsets/s|ETA 0 s" "$WORK/replay.tty" >&2; fail "replay: a rate or ETA of nothing"
fi

# Not on a terminal (or in json): no status line, the batch lines as ever.
kt_gen "$topic" --lines 3000 --seed 1841 > /dev/null
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --exit-when-idle \
  --interval 0 2> "$WORK/file.log" || fail "run to a file failed"
grep -Eq "batch [0-9]+: " "$WORK/file.log" && ! grep -q $'\r' "$WORK/file.log" || fail "off a terminal: progress or no batch line"
on_tty "$WORK/json.tty" "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  --exit-when-idle --interval 0 --log-format json
if grep -q "records/s" "$WORK/json.tty"; then fail "json on a terminal: a status line"; fi
note "$TEST_NAME: run and replay on a terminal: rate and ETA once measurable, one summary line; none off a terminal"
