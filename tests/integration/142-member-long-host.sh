#!/usr/bin/env bash
# The committer's name fits ktally_batches.member (issue #11 item 11):
# `job-pid@host` with a 64-character job on a host whose name is 64
# characters long (Linux's HOST_NAME_MAX; Kubernetes pod names reach 63)
# overflowed VARCHAR(128), and every commit failed, for ever. The host name
# is set in a UTS namespace of the test's own (unshare --uts, as root: the
# CI runs as root), so ktally reads it the way it would on such a host.
# tests/test-schema.c covers longer names (cut to the column) and bytes
# that are not ASCII.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

host=$(printf 'h%.0s' {1..64})
job=$(printf 'j%.0s' {1..64})
unshare --uts true 2> /dev/null || fail "unshare --uts is not permitted here (the test needs root)"

topic=$(kt_new_topic member 2)
kt_gen "$topic" --lines 2000 --seed 142 --truth "$WORK/truth" > /dev/null
for mode in transactional idempotent; do
  db_uri=$(kt_new_db "member_$mode"); db=$(kt_db_name "$db_uri")
  unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' sh "$host" \
    "$KTALLY" run --mode "$mode" --brokers "$KT_BROKERS" --topic "$topic" --job "$job" \
    --db "$db_uri" --interval 0 --exit-when-idle 2> "$WORK/$mode.log" \
    || { tail -5 "$WORK/$mode.log" >&2; fail "$mode: a run on a host with a 64-character name failed"; }
  kt_check_counts "$db" "$WORK/truth"
  kt_audit "$db_uri"
  members=$(kt_sql "$db" "SELECT DISTINCT member FROM ktally_batches")
  [[ $members =~ ^$job-[0-9]+@$host$ ]] || fail "$mode: member is '$members', not $job-PID@$host"
done

note "$TEST_NAME: members of ${#members} characters committed whole, both modes exact"
