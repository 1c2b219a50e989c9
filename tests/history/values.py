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


# ---- Structured records (--input json, logfmt, otlp-json) -------------------

# The fields the checker's structured jobs read (gen.py): the service for
# --by and the number for --sum, by input.
STRUCTURED_BY = {"json": "service.name", "logfmt": "svc", "otlp-json": "service.name"}
STRUCTURED_SUM = {"json": "http.bytes", "logfmt": "bytes", "otlp-json": "bytes"}

S_LEVELS = ["ERROR", "error", "Error", "WARN", "warn", "INFO", "info", "FATAL", "DEBUG", "ERRORS",
            "E", "WARNING"]
SERVICES = ["api", "db", "", "caf\u00e9", "(other)", "a b", "x" * 300, "quote\"d", "tab\there"]


class StructuredValues:
    """A stream of structured record values of one input; the clock moves
    forward 0-90 s a record, somewhere in 2016-2018."""

    def __init__(self, seed, shapes, input):
        self.r = random.Random(seed)
        self.shapes = shapes
        self.input = input
        r = self.r
        self.t = ((r.randint(2016, 2018) - 1970) * 365 + r.randint(0, 360)) * 86400 + r.randint(0, 86399)

    def tick(self):
        self.t += self.r.choice([0, 0, 1, 3, 15, 40, 90])
        return self.t

    def time_text(self, quote):
        """The clock in one of the forms producers write (a JSON value, or a
        logfmt value when @quote is False)."""
        import time as _t
        r = self.r
        t = self.tick()
        form = r.randrange(7)
        if form <= 2:
            zone = r.choice(["Z", "z", "+02:00", "-05:30", "+0530", "+00", ""])
            off = {"+02:00": 120, "-05:30": -330, "+0530": 330}.get(zone, 0)
            tm = _t.gmtime(t + off * 60)
            sep = r.choice(["T", "t", " "]) if quote else "T"
            frac = r.choice(["", ".5", ".123456789", ",25"])
            text = "%04d-%02d-%02d%s%02d:%02d:%02d%s%s" % (tm[:3] + (sep,) + tm[3:6] + (frac, zone))
            return '"%s"' % text if quote else text
        if form == 3:
            text = "%d.%d" % (t, r.randrange(1000))
        elif form == 4:
            text = "%d%03d" % (t, r.randrange(1000))
        elif form == 5:
            text = "%d%09d" % (t, r.randrange(10 ** 9))
        else:
            text = r.choice(["%de0" % t, "%d.%de9" % (t // 10 ** 9, t % 10 ** 9)])
        return '"%s"' % text if quote and r.random() < 0.4 else text

    def edge_time(self, quote):
        text = self.r.choice(["0999-12-31T23:59:59Z", "9999-12-31T23:59:59-01:00",
                              "2017-02-29T00:00:00Z", "2016-02-29T23:59:60Z", "-62135596800",
                              "1e30", "253402300799", "yesterday", "2017-06-30T12:00:00+24:00",
                              "86400000", "-0.5"])
        return '"%s"' % text if quote else text

    def sum_text(self, quote):
        r = self.r
        units = r.randrange(-10 ** 7, 10 ** 8)
        good = "%s%d.%04d" % ("-" if units < 0 else "", abs(units) // 10000, abs(units) % 10000)
        text = r.choice([good] * 8 + [str(r.randrange(1000)), "0.5", "1e3", "1.23456", "-", ""])
        if quote is None:
            return text
        if not text or not (text[0].isdigit() or text[0] == "-" and text[1:2].isdigit()) \
                or text.endswith("-") or r.random() < 0.3:
            return json.dumps(text)
        return text

    # -- json --
    def json_record(self):
        r = self.r
        parts = []
        if r.random() < 0.9:
            parts.append('"%s":%s' % (r.choice(["@timestamp", "time", "ts", "timestamp"]),
                                      self.time_text(True) if r.random() < 0.95
                                      else self.edge_time(True)))
        if r.random() < 0.95:
            form = r.randrange(6)
            if form == 0:
                parts.append('"level":%d' % r.choice([50, 40, 30, 20, 60, 35]))
            elif form == 1:
                parts.append('"severity_number":%d' % r.choice([17, 18, 13, 9, 21, 0, 30]))
            elif form == 2:
                parts.append('"log":{"level":%s}' % json.dumps(r.choice(S_LEVELS)))
            elif form == 3:
                parts.append('"log.level":%s' % json.dumps(r.choice(S_LEVELS)))
            else:
                parts.append('"level":%s' % r.choice([json.dumps(r.choice(S_LEVELS))] * 5
                                                      + ["true", "null", "50.5", '{"x":1}']))
        svc = r.choice(SERVICES)
        if r.random() < 0.85:
            parts.append(r.choice(['"service":{"name":%s}', '"service.name":%s'])
                         % r.choice([json.dumps(svc), json.dumps(svc, ensure_ascii=False), "7",
                                     "true", "null", "[1]"] if r.random() < 0.2
                                    else [json.dumps(svc)]))
        if r.random() < 0.9:
            parts.append(r.choice(['"http":{"bytes":%s}', '"http.bytes":%s'])
                         % self.sum_text(True))
        parts.append('"message":%s' % json.dumps(r.choice(["ok", "disk full", "caf\u00e9 \u2603",
                                                          "a\u0001b"])))
        if r.random() < 0.1:
            parts.append('"level":%s' % json.dumps(r.choice(S_LEVELS)))   # repeated: the last
        r.shuffle(parts)
        sep = r.choice([",", ",", ", ", " ,\t"])
        return ("{" + sep.join(parts) + "}").encode()

    def json_hostile(self):
        r = self.r
        good = self.json_record()
        return r.choice([
            good[:-1],                                   # cut short
            good + b" {}",                               # a second document
            good.replace(b"}", b',"x":"\\u0000"}', 1),   # NUL escaped
            good.replace(b"}", b',"x":"a\x00b"}', 1),    # NUL raw
            good.replace(b"}", b',"x":"\\udc00"}', 1),   # a lone surrogate
            good.replace(b"}", b',"x":"\xc3\x28"}', 1),  # invalid UTF-8
            good.replace(b"}", b',"x":' + b"[" * 70 + b"]" * 70 + b"}", 1),
            good.replace(b"}", b',"x":' + b"[" * 63 + b"]" * 63 + b"}", 1),   # 64 deep: fine
            b"[" + good + b"]",                          # no object
            b"\xef\xbb\xbf" + good,                      # a BOM
            good.replace(b"{", b"{/* c */", 1),          # a comment
            good.replace(b"{", b"{\"n\":NaN,", 1),
            b"  " + good + b" \t",                       # white space: fine
        ])

    # -- logfmt --
    def logfmt_record(self):
        r = self.r
        parts = []
        if r.random() < 0.9:
            parts.append("%s=%s" % (r.choice(["ts", "time", "timestamp"]),
                                    self.time_text(False) if r.random() < 0.95
                                    else self.edge_time(False)))
        if r.random() < 0.95:
            lv = r.choice(S_LEVELS)
            parts.append("%s=%s" % (r.choice(["level", "level", "lvl"]),
                                    lv if r.random() < 0.7 else json.dumps(lv)))
        svc = r.choice(SERVICES)
        if r.random() < 0.85:
            if r.random() < 0.1:
                parts.append("svc")                      # a flag: null, the empty key
            elif svc and all(c > " " and c not in '="' for c in svc) and r.random() < 0.6:
                parts.append("svc=" + svc)
            else:
                parts.append("svc=" + json.dumps(svc, ensure_ascii=r.random() < 0.5))
        if r.random() < 0.9:
            text = self.sum_text(None)
            parts.append("bytes=" + (text if text and r.random() < 0.7 else json.dumps(text)))
        parts.append('msg=%s' % json.dumps(r.choice(["ok", "disk full", "caf\u00e9"]),
                                           ensure_ascii=False))
        if r.random() < 0.1:
            parts.append("level=" + r.choice(S_LEVELS))     # repeated: the last
        r.shuffle(parts)
        return r.choice([" ", " ", "\t", "  "]).join(parts).encode()

    def logfmt_hostile(self):
        r = self.r
        good = self.logfmt_record()
        return r.choice([
            good + b' msg="unterminated',
            good + b" a=b=c",
            good + b" =x",
            good + b' a"b=1',
            good + b" x=\xff",
            good + b' m="\\u0000"',
            good + b" m=a\x00b",
            good + b' m="x"y',
            good + b" m=\x01",
            good + b' m="\\udc00"',
            b"hello world",
            b"  " + good + b"  ",                         # spaces: fine
        ])

    # -- otlp-json --
    def otlp_attr(self, key, value):
        return '{"key":%s,"value":%s}' % (json.dumps(key), value)

    def otlp_record(self):
        r = self.r
        if r.random() < 0.03:
            return r.choice(["3", "null", '"x"', "[]"])
        parts = []
        t = self.tick()
        tform = r.randrange(6)
        if tform == 0:
            parts.append('"timeUnixNano":"0","observedTimeUnixNano":"%d%09d"' % (t, r.randrange(10 ** 9)))
        elif tform == 1:
            parts.append('"timeUnixNano":%d%09d' % (t, r.randrange(10 ** 9)))
        elif tform == 2 and r.random() < 0.3:
            pass                                          # no time at all
        else:
            parts.append('"timeUnixNano":"%d%09d"' % (t, r.randrange(10 ** 9)))
        lform = r.randrange(5)
        if lform == 0:
            parts.append('"severityText":%s' % json.dumps(r.choice(S_LEVELS)))
        elif lform == 1:
            parts.append('"severityNumber":%d' % r.choice([17, 18, 20, 13, 9, 21, 0, 25]))
        elif lform == 2:
            parts.append('"severityNumber":"SEVERITY_NUMBER_%s"' % r.choice(
                ["ERROR", "ERROR3", "WARN", "INFO", "FATAL2", "UNSPECIFIED", "LOUD"]))
        elif lform == 3:
            parts.append('"severityText":"","severityNumber":%d' % r.choice([17, 13]))
        attrs = []
        if r.random() < 0.85:
            attrs.append(self.otlp_attr("bytes", r.choice([
                '{"intValue":"%d"}' % r.randrange(10000), '{"intValue":%d}' % r.randrange(10000),
                '{"doubleValue":%s}' % r.choice(["0.5", "12.25", "1e3"]),
                '{"stringValue":%s}' % json.dumps(self.sum_text(None))])))
        if r.random() < 0.15:
            attrs.append(self.otlp_attr("service.name", '{"stringValue":%s}' % json.dumps(
                r.choice(SERVICES))))
        if r.random() < 0.05:
            attrs.append(self.otlp_attr("service.name", '{"arrayValue":{"values":[]}}'))
        if attrs or r.random() < 0.5:
            parts.append('"attributes":[%s]' % ",".join(attrs))
        parts.append('"body":{"stringValue":%s}' % json.dumps(r.choice(["ok", "caf\u00e9"])))
        r.shuffle(parts)
        return "{" + ",".join(parts) + "}"

    def otlp_request(self):
        r = self.r
        resources = []
        for _ in range(r.randint(1, 3)):
            scopes = []
            for _ in range(r.randint(1, 2)):
                records = [self.otlp_record() for _ in range(r.randint(0, 5))]
                scopes.append('{"scope":{"name":"s"},"logRecords":[%s]}' % ",".join(records))
            res = ""
            if r.random() < 0.9:
                res = '"resource":{"attributes":[%s]}' % self.otlp_attr(
                    "service.name", '{"stringValue":%s}' % json.dumps(r.choice(SERVICES)))
            sl = '"scopeLogs":[%s]' % ",".join(scopes)
            resources.append("{" + ",".join(p for p in r.sample([res, sl], 2) if p) + "}")
        v = ('{"resourceLogs":[%s]}' % ",".join(resources)).encode()
        if r.random() < {"plain": 0.02, "mixed": 0.1, "hostile": 0.3, "multi": 0.05}[self.shapes]:
            v = r.choice([
                v[: len(v) // 2],
                v.replace(b'"s"', b'"\\u0000"', 1),
                b'{"resourceLogs":{}}',
                b'{"resourceLogs":[{"scopeLogs":7}]}',
                b"[]",
                v + b"\n" + v,                           # two requests: no JSON text
                b"\x0a\x2a\x12\x28\x0a\x26",             # otlp_proto's bytes
            ])
        return v

    # -- values --
    def record(self):
        r = self.r
        bad = {"plain": 0.03, "mixed": 0.15, "hostile": 0.35, "multi": 0.1}[self.shapes]
        if self.input == "json":
            return self.json_hostile() if r.random() < bad else self.json_record()
        return self.logfmt_hostile() if r.random() < bad else self.logfmt_record()

    def value(self):
        """One record value: bytes, or None for a tombstone."""
        r = self.r
        if self.input == "otlp-json":
            shape = r.choices(["one", "empty", "null"], weights=[95, 3, 2])[0]
            return self.otlp_request() if shape == "one" else (b"" if shape == "empty" else None)
        shape = r.choices(["one", "multi", "crlf", "empty", "null", "trailing"],
                          weights={"plain": [90, 5, 2, 1, 1, 1], "mixed": [55, 20, 10, 5, 5, 5],
                                   "hostile": [45, 25, 15, 5, 5, 5],
                                   "multi": [20, 55, 15, 3, 3, 4]}[self.shapes])[0]
        if shape == "one":
            return self.record()
        if shape == "multi":
            recs = [self.record() for _ in range(r.randint(2, 7))]
            if r.random() < 0.3:
                recs.insert(r.randrange(len(recs)), b"")
            return b"\n".join(recs)
        if shape == "crlf":
            return b"\r\n".join(self.record() for _ in range(r.randint(1, 4))) + b"\r\n"
        if shape == "empty":
            return b""
        if shape == "null":
            return None
        return self.record() + b"\n"
