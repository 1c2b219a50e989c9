#!/usr/bin/python3
"""kt-malformed: the malformed lines a topic holds, as a dead-letter table
(--dead-letters) must hold them, from the records themselves and
tests/history/lines.py (the independent reference of the line rules).

Reads every partition of the topic from its log start to its high
watermark (read_committed, as ktally) and prints one line per malformed
line, sorted by place:

  topic<TAB>partition<TAB>offset<TAB>line_no<TAB>HEX(raw)<TAB>raw_bytes

where line_no counts every '\\n' of the value from 1 (empty lines too),
raw is the line without its '\\n' and one trailing '\\r', cut at 2048
bytes, and raw_bytes its whole length: what

  SELECT topic, `partition`, `offset`, line_no, HEX(raw), raw_bytes
  FROM TABLE ORDER BY 1, 2, 3, 4

prints. Shares no line of ktally's code.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "history"))
import lines  # noqa: E402

RAW_BYTES = 2048


def records(brokers, topic):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": brokers, "group.id": "kt-malformed",
                  "enable.auto.commit": False, "isolation.level": "read_committed",
                  "enable.partition.eof": True, "fetch.message.max.bytes": 20000000,
                  "fetch.max.bytes": 30000000,
                  "receive.message.max.bytes": 40000000})
    md = c.list_topics(topic, timeout=20)
    parts = sorted(md.topics[topic].partitions)
    todo = []
    for p in parts:
        low, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=20)
        if high > low:
            todo.append(TopicPartition(topic, p, low))
    c.assign(todo)
    left = {tp.partition for tp in todo}
    out = []
    while left:
        m = c.poll(10)
        if m is None:
            sys.exit("kt-malformed: no record for 10 s, %s left" % sorted(left))
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                left.discard(m.partition())
                continue
            sys.exit("kt-malformed: %s" % m.error())
        out.append((m.partition(), m.offset(), m.value()))
    c.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--brokers", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--time-format", default="default", help="default or iso8601")
    ap.add_argument("--bucket", default="1m")
    ap.add_argument("--levels", default="ERROR")
    args = ap.parse_args()
    fmt = lines.Format(time=args.time_format, bucket=args.bucket, levels=args.levels)
    rows = []
    for part, offset, value in records(args.brokers, args.topic):
        if not value:
            continue
        for number, line in enumerate(value.split(b"\n"), 1):
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                continue
            kind, _ = fmt.line(line)
            if kind == lines.MALFORMED:
                rows.append((part, offset, number, line[:RAW_BYTES].hex().upper(), len(line)))
    for part, offset, number, raw, n in sorted(rows):
        print("%s\t%d\t%d\t%d\t%s\t%d" % (args.topic, part, offset, number, raw, n))


if __name__ == "__main__":
    main()
