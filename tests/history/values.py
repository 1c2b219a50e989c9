"""Record values of random shape, from a produce operation's own seed.

Log values: single lines, several lines, CRLF, malformed lines, hostile
bytes, empty and null values, long lines, iso8601 lines, calendar edges.
Ledger values: JSON transactions, bad messages, duplicates, tombstones; each
with what it means (the ledger oracle reads that, not the bytes).
"""
import json
import random
import zlib

from lines import out_of_range_iso

LEVELS = [(b"ERROR", 34), (b"INFO", 24), (b"WARN", 10), (b"FATAL", 8), (b"DEBUG", 8),
          (b"error", 5), (b"ERRORS", 4), (b"Error", 3), (b"E", 2), (b"WARNING", 2)]
WORDS = [b"disk", b"quota", b"ERROR", b"timeout", b"user", b"retry", b"FATAL", b"db", b"ok",
         b"payment", b"failed", b"cache"]


class LogValues:
    """A stream of log record values; the clock moves forward 0-90 s a line."""

    def __init__(self, seed, shapes, iso_percent, iso_out_of_range):
        self.r = random.Random(seed)
        self.shapes = shapes
        self.iso = iso_percent
        self.iso_oor = iso_out_of_range
        r = self.r
        # A clock somewhere in 2016-2018 (2016 is a leap year).
        self.t = ((r.randint(2016, 2018) - 1970) * 365 + r.randint(0, 360)) * 86400 + r.randint(0, 86399)

    def stamp(self):
        import time as _t
        self.t += self.r.choice([0, 0, 1, 3, 15, 40, 90])
        tm = _t.gmtime(self.t)
        return tm

    def level(self):
        x = self.r.randrange(sum(w for _, w in LEVELS))
        for lv, w in LEVELS:
            if x < w:
                return lv
            x -= w
        return LEVELS[0][0]

    def message(self):
        r = self.r
        if r.random() < 0.1:
            return b""
        return b" " + b" ".join(r.choice(WORDS) for _ in range(r.randint(1, 4))) + b" %d" % r.randrange(100000)

    def good_line(self):
        r = self.r
        tm = self.stamp()
        if r.randrange(100) < self.iso:
            frac = r.choice([b"", b".5", b".123456"])
            zone = r.choice([b"", b"Z", b"+02:00", b"-05:30", b"+00:00", b"+14:00"])
            ts = b"%04d-%02d-%02dT%02d:%02d:%02d" % tm[:6] + frac + zone
        else:
            ts = b"%04d-%02d-%02d %02d:%02d:%02d" % tm[:6]
        return ts + b" " + self.level() + self.message()

    def edge_line(self):
        r = self.r
        ts = r.choice([b"2016-02-29 23:59:59", b"2017-02-29 10:00:00", b"1900-02-29 10:00:00",
                       b"2000-02-29 00:00:00", b"1000-01-01 00:00:00", b"0999-12-31 23:59:59",
                       b"9999-12-31 23:59:59", b"2017-13-01 00:00:00",
                       b"2017-00-10 00:00:00", b"2017-04-31 12:00:00", b"2017-06-30 24:00:00",
                       b"2017-06-30 23:60:00", b"1000-01-01T00:30:00+01:00",
                       b"9999-12-31T23:59:59-01:00", b"2017-06-30T12:00:00+24:00",
                       b"2017-06-30T12:00:00+23:59"])
        line = ts + b" " + r.choice([b"ERROR", b"FATAL", b"INFO"]) + self.message()
        if not self.iso_oor and out_of_range_iso(line):
            line = b"2017-06-30T12:00:00Z ERROR in range"
        return line

    def malformed_line(self):
        r = self.r
        tm = self.stamp()
        d = b"%04d-%02d-%02d" % tm[:3]
        t = b"%02d:%02d:%02d" % tm[3:6]
        return r.choice([
            d + b" " + t,                              # no level
            d + b" " + t + b" ",                       # empty level
            d + b" " + t + b"  ERROR two spaces",
            b" " + d + b" " + t + b" ERROR leading blank",
            d + b"\t" + t + b" ERROR tab",
            d + b" " + t + b" 123 number",
            d + b" " + t + b" ERROR1 digit",
            d + b" " + t + b" ERROR:colon",
            d + b" " + t + b" ERR\xc3\x96R unicode",
            b"hello world",
            b"ERROR " + d + b" " + t,
            d[:4] + b"/" + d[5:] + b" " + t + b" ERROR slash",
            b"\xef\xbb\xbf" + d + b" " + t + b" ERROR bom",
        ])

    def hostile_line(self):
        r = self.r
        base = self.good_line()
        junk = bytes(r.randrange(256) for _ in range(r.randint(1, 12)))
        s = r.random()
        if s < 0.5:
            return base + b" " + junk           # after the level: opaque
        if s < 0.7:
            return base + b"\x00" + junk
        pos = r.randrange(len(base))             # anywhere: likely malformed
        return base[:pos] + junk.replace(b"\n", b"") + base[pos:]

    def line(self, kind=None):
        r = self.r
        kind = kind or r.choices(["good", "malformed", "hostile", "edge"],
                                 weights={"plain": [95, 3, 0, 2], "mixed": [70, 12, 10, 8],
                                          "hostile": [45, 20, 30, 5], "multi": [80, 10, 5, 5]}[self.shapes])[0]
        return {"good": self.good_line, "malformed": self.malformed_line,
                "hostile": self.hostile_line, "edge": self.edge_line}[kind]()

    def value(self):
        """One record value: bytes, or None for a tombstone."""
        r = self.r
        shape = r.choices(["one", "multi", "crlf", "empty", "null", "blanks", "long", "trailing"],
                          weights={"plain": [90, 5, 2, 1, 1, 0, 0, 1],
                                   "mixed": [50, 20, 10, 5, 5, 3, 2, 5],
                                   "hostile": [40, 20, 15, 5, 5, 5, 5, 5],
                                   "multi": [20, 50, 15, 3, 3, 3, 1, 5]}[self.shapes])[0]
        if shape == "one":
            return self.line()
        if shape == "multi":
            lines = [self.line() for _ in range(r.randint(2, 7))]
            if r.random() < 0.3:
                lines.insert(r.randrange(len(lines)), b"")
            return b"\n".join(lines)
        if shape == "crlf":
            lines = [self.line() for _ in range(r.randint(1, 5))]
            sep = r.choice([b"\r\n", b"\r\n", b"\r\r\n", b"\n\r"])
            v = sep.join(lines) + r.choice([b"", b"\r\n", b"\r"])
            if r.random() < 0.2:
                v = v.replace(b" ", b"\r", 1)
            return v
        if shape == "empty":
            return b""
        if shape == "null":
            return None
        if shape == "blanks":
            return r.choice([b"\n", b"\r\n", b"\n\n\n", b"\r", b" ", b"\r\n\r\n"])
        if shape == "long":
            return self.good_line() + b" " + b"x" * r.randint(2000, 20000)
        return self.line() + b"\n"                  # a trailing newline


class LedgerValues:
    """A stream of ledger transactions for one topic.

    keyed: each account lives on one partition (debits allowed; their order
    within the account is the partition's). Unkeyed: credits only, so the
    result does not depend on how partitions interleave."""

    def __init__(self, seed, topic_tag, accounts, keyed, dups, bad):
        self.r = random.Random(seed)
        self.tag = topic_tag
        self.accounts = ["ACC-%s-%d" % (topic_tag, i) for i in range(accounts)]
        self.keyed = keyed
        self.dups = dups
        self.bad = bad
        self.seed = seed
        self.n = 0
        self.sent = []   # (value, meta, account) of good messages, for duplicates

    def account_partition(self, account, partitions):
        return zlib.crc32(account.encode()) % partitions

    def amount(self):
        r = self.r
        units = r.choice([1, 10000, 123456, 5000000, r.randrange(1, 10 ** 9)])
        if self.keyed and r.random() < 0.4:
            units = -units
        return units

    @staticmethod
    def amount_text(units):
        a = abs(units)
        text = "%d.%04d" % (a // 10000, a % 10000)
        return ("-" if units < 0 else "") + text

    def message(self):
        """(value, meta, account): meta ("tx", txn, account, units) or ("bad",)."""
        r = self.r
        self.n += 1
        if self.sent and r.randrange(1000) < self.dups:
            return r.choice(self.sent)
        if r.randrange(1000) < self.bad:
            acc = r.choice(self.accounts)
            v = r.choice([
                b"not json", b"", None, b"{}",
                json.dumps({"txn": "B", "account": acc, "amount": 12.5,
                            "ts": "2017-07-30 14:09:08"}).encode(),
                json.dumps({"txn": "B", "account": acc, "amount": "1.00001",
                            "ts": "2017-07-30 14:09:08"}).encode(),
                json.dumps({"txn": "B", "account": acc, "ts": "2017-07-30 14:09:08"}).encode(),
                json.dumps({"txn": "B", "account": acc, "amount": "1.0",
                            "ts": "2017-02-30 14:09:08"}).encode(),
                b'{"txn": "B", "account": "A", "amount": "1", "ts": "2017-07-30 14:09:08"',
            ])
            return v, ("bad",), acc
        acc = r.choice(self.accounts)
        txn = "T-%s-%d-%d" % (self.tag, self.seed, self.n)
        units = self.amount()
        v = json.dumps({"txn": txn, "account": acc, "amount": self.amount_text(units),
                        "ts": "2017-07-30 %02d:%02d:%02d" % (r.randrange(24), r.randrange(60),
                                                             r.randrange(60))}).encode()
        m = (v, ("tx", txn, acc, units), acc)
        self.sent.append(m)
        return m
