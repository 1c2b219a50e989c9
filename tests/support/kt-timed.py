#!/usr/bin/python3
"""kt-timed: records with chosen Kafka timestamps, and what ktally must make
of them (the tests of moves by time: 240-249).

  produce   writes records whose timestamps (CreateTime) the caller chooses,
            and appends what was written (partition, offset, timestamp,
            value) to a file of JSON lines, one record a line: the oracle's
            input. Values are log lines in ktally's default format (ERROR,
            INFO and malformed lines, one to four a record).
  at        the offset of a moment in each partition as Kafka's
            offsets-for-times defines it, computed from that file: the
            earliest offset whose timestamp is at or after it, or the
            partition's end ("end") where none is.
  truth     the per-minute ERROR counts of the records of some offset
            ranges (all of them by default), by tests/history/lines.py, the
            independent reference of the line rules: "minute<TAB>count".
  open-txn  begins a transaction, writes records in it and leaves it open
            (prints its producer's transactional.id); the partition's last
            stable offset stays below them until it times out.

Independent of ktally's code: it shares no line of it.
"""
import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "history"))
import lines  # noqa: E402


def value_of(rng, ts_ms):
    """One to four lines, their own times near the record's."""
    out = []
    for _ in range(rng.randint(1, 4)):
        t = ts_ms // 1000 + rng.randint(-90, 90)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
        r = rng.random()
        if r < 0.5:
            out.append("%s ERROR something failed %d" % (stamp, rng.randint(0, 999)))
        elif r < 0.85:
            out.append("%s INFO all is well" % stamp)
        else:
            out.append("%s?? not a line" % stamp[:10])
    return "\n".join(out).encode()


def produce(args):
    from confluent_kafka import Producer
    rng = random.Random(args.seed)
    p = Producer({"bootstrap.servers": args.brokers, "linger.ms": 5,
                  "enable.idempotence": True})
    out = open(args.out, "a")
    failed = []

    unsure = []
    known = set()

    def delivered(err, msg):
        if err is not None:
            failed.append(str(err))
            return
        rec = {"p": msg.partition(), "o": msg.offset(), "ts": msg.timestamp()[1],
               "v": msg.value().decode("latin-1")}
        if rec["o"] is None or rec["o"] < 0:
            # Acknowledged without an offset: librdkafka's idempotent
            # producer says so of a batch the broker called a duplicate.
            # Seen against Kafka 4.1.1 (1 run in 7 of 1,200 records over
            # 300 new partitions) for records NOT in the log: found below.
            unsure.append(rec)
            return
        known.add((rec["p"], rec["o"]))
        out.write(json.dumps(rec) + "\n")

    n = args.records
    partitions = [int(x) for x in args.partitions.split(",")]
    for i in range(n):
        ts = args.from_ms + (args.until_ms - args.from_ms) * i // max(n, 1)
        part = partitions[i % len(partitions)]
        if args.disorder and rng.random() < args.disorder:
            ts -= rng.randint(1, args.disorder_ms)
        if args.live:
            ts = int(time.time() * 1000)
        p.produce(args.topic, value_of(rng, ts), partition=part, timestamp=ts,
                  on_delivery=delivered)
        p.poll(0)
        if args.rate:
            time.sleep(1.0 / args.rate)
    if p.flush(30) != 0 or failed:
        sys.exit("kt-timed: not delivered: %s" % (failed[:3] or "flush timed out"))
    if unsure:
        found = locate(args.brokers, args.topic, unsure, known)
        for rec in found:
            out.write(json.dumps(rec) + "\n")
        sys.stderr.write("kt-timed: %d records acknowledged without an offset; %d found in the "
                         "log, %d not there (left out of the records file)\n"
                         % (len(unsure), len(found), len(unsure) - len(found)))
    out.close()


def locate(brokers, topic, unsure, known):
    """The records of @unsure that are in the log, with their offsets: each
    partition concerned read from its start, matched by timestamp and value
    (at an offset no other record of ours was acknowledged at, @known)."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": brokers, "group.id": "kt-timed-locate",
                  "enable.auto.commit": False, "enable.partition.eof": True,
                  "isolation.level": "read_committed"})
    parts = sorted({r["p"] for r in unsure})
    c.assign([TopicPartition(topic, part, 0) for part in parts])
    seen = {}
    left = set(parts)
    deadline = time.time() + 30
    while left and time.time() < deadline:
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                left.discard(m.partition())
            continue
        if (m.partition(), m.offset()) not in known:
            seen.setdefault((m.partition(), m.timestamp()[1], m.value()), []).append(m.offset())
    c.close()
    found = []
    for rec in unsure:
        offs = seen.get((rec["p"], rec["ts"], rec["v"].encode("latin-1")))
        if offs:
            found.append(dict(rec, o=offs.pop(0)))
    return found


def read(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def at(args):
    recs = read(args.records)
    parts = sorted({int(x) for x in args.partitions.split(",")})
    words = []
    for part in parts:
        found = [r["o"] for r in recs if r["p"] == part and r["ts"] >= args.ms]
        words.append("%d:%s" % (part, min(found) if found else "end"))
    print(" ".join(words))


def truth(args):
    recs = read(args.records)
    ranges = None
    if args.ranges:
        ranges = []
        for item in args.ranges.split(","):
            part, span = item.split(":")
            a, b = span.split("-")
            ranges.append((int(part), int(a), int(b)))
    fmt = lines.Format(bucket=args.bucket, levels=args.levels, by=args.by)
    counts = {}
    for r in recs:
        if ranges is not None and not any(p == r["p"] and a <= r["o"] < b for p, a, b in ranges):
            continue
        fmt.value(r["v"].encode("latin-1"), counts)
    for k in sorted(counts):
        if fmt.keyed:
            minute, key = k
            print("%s\t%s\t%d" % (lines.minute_text(minute), "\t".join(v.decode() for v in key),
                                  counts[k][0]))
        else:
            print("%s\t%d" % (lines.minute_text(k), counts[k]))


def open_txn(args):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": args.brokers, "transactional.id": args.id,
                  "transaction.timeout.ms": args.timeout_ms})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(args.records):
        p.produce(args.topic, b"2024-05-01 12:00:00 ERROR uncommitted", partition=args.partition,
                  timestamp=args.ts)
    p.flush(30)
    # Left open: the process exits without committing or aborting.
    print(args.id)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    pr = sub.add_parser("produce")
    pr.add_argument("--brokers", required=True)
    pr.add_argument("--topic", required=True)
    pr.add_argument("--partitions", required=True, help="0,1,2: round robin over these")
    pr.add_argument("--records", type=int, required=True)
    pr.add_argument("--from-ms", type=int, default=0)
    pr.add_argument("--until-ms", type=int, default=0)
    pr.add_argument("--disorder", type=float, default=0.0,
                    help="this fraction of records get an earlier timestamp")
    pr.add_argument("--disorder-ms", type=int, default=600000)
    pr.add_argument("--live", action="store_true", help="timestamps: the time of producing")
    pr.add_argument("--rate", type=float, default=0.0, help="records a second (0: at once)")
    pr.add_argument("--seed", type=int, default=1)
    pr.add_argument("--out", required=True)
    a = sub.add_parser("at")
    a.add_argument("--records", required=True)
    a.add_argument("--partitions", required=True)
    a.add_argument("--ms", type=int, required=True)
    t = sub.add_parser("truth")
    t.add_argument("--records", required=True)
    t.add_argument("--ranges", help="P:FROM-UNTIL,... (default: every record)")
    t.add_argument("--bucket", default="1m")
    t.add_argument("--levels", default="ERROR")
    t.add_argument("--by", help="level: per minute and level (minute, level, count)")
    o = sub.add_parser("open-txn")
    o.add_argument("--brokers", required=True)
    o.add_argument("--topic", required=True)
    o.add_argument("--partition", type=int, required=True)
    o.add_argument("--records", type=int, default=3)
    o.add_argument("--ts", type=int, required=True)
    o.add_argument("--id", required=True)
    o.add_argument("--timeout-ms", type=int, default=120000)
    args = ap.parse_args()
    {"produce": produce, "at": at, "truth": truth, "open-txn": open_txn}[args.cmd](args)


if __name__ == "__main__":
    main()
