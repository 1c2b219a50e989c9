"""The judge of log lines: an independent reference of ktally's line rules.

Written from ktally-run(1), LOG LINES (src/man/ktally-run.1.in), and meant to be
obviously right rather than fast: a record's value is split on b"\\n", one
trailing b"\\r" is dropped per line, empty lines are not lines, and a line
is ERROR (counted in its bucket), OTHER or MALFORMED.

Formats drawn by the checker: the default one, and the default line shape
with --time-format iso8601; each with --bucket 1m|5m|1h and --levels. With
--by and --sum (ktally-run(1), ANALYTICS): --by level on either, and on the
default time format the pattern FIELDS_PATTERN below, whose `word` is the
first word after the level and `n` the last word of the line (a number to
--sum, or the line is malformed when counted).
"""
import re

# Minutes since 1970-01-01 00:00 of MariaDB's DATETIME range.
def civil_minute(y, mo, d, h, mi):
    """Minutes since the epoch of a proleptic Gregorian date (no time zone)."""
    # Day count by Howard Hinnant's days_from_civil, written out plainly.
    y2 = y - 1 if mo <= 2 else y
    era = (y2 if y2 >= 0 else y2 - 399) // 400
    yoe = y2 - era * 400
    doy = (153 * (mo + (-3 if mo > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146097 + doe - 719468
    return days * 1440 + h * 60 + mi


def minute_text(minute):
    """'YYYY-MM-DD HH:MM:00' of a minute since the epoch, as MariaDB prints it."""
    days, mod = divmod(minute, 1440)
    z = days + 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (1 if m <= 2 else 0)
    return "%04d-%02d-%02d %02d:%02d:00" % (y, m, d, mod // 60, mod % 60)


DATETIME_MIN = civil_minute(1000, 1, 1, 0, 0)
DATETIME_MAX = civil_minute(9999, 12, 31, 23, 59)


def is_leap(y):
    return (y % 4 == 0 and y % 100 != 0) or y % 400 == 0


def days_in_month(y, m):
    return 29 if m == 2 and is_leap(y) else [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]


def valid_civil(y, mo, d, h, mi, s):
    return (1000 <= y <= 9999 and 1 <= mo <= 12 and 1 <= d <= days_in_month(y, mo)
            and 0 <= h <= 23 and 0 <= mi <= 59 and 0 <= s <= 60)


# The default line: the timestamp from the first byte, one space, a level
# of ASCII letters, then a space or the end of the line.
DEFAULT_LINE = re.compile(
    rb"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([A-Za-z]+)(?: |\Z)")
# --time-format iso8601 without --pattern: a time of non-blanks, then the
# same level rule.
ISO_LINE = re.compile(rb"(\S+) ([A-Za-z]+)(?: |\Z)")
ISO_TIME = re.compile(
    rb"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
    rb"(?:\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?\Z")

ERROR, OTHER, MALFORMED = "error", "other", "malformed"

# The --pattern the checker gives with --by word or --sum n: the default
# line (the level followed by a space or the end), then the fields.
FIELDS_PATTERN = (r"^(?<time>[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}) "
                  r"(?<level>[A-Za-z]+)(?=\z| )(?: (?<word>[^ ]*))?(?:.* (?<n>[^ ]*))?")
# The same in Python's re: groups by number, \Z for PCRE's \z.
FIELDS_LINE = re.compile(
    rb"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([A-Za-z]+)(?=\Z| )"
    rb"(?: ([^ ]*))?(?:.* ([^ ]*))?")
SUM_TEXT = re.compile(rb"(-?)([0-9]+)(?:\.([0-9]{1,4}))?\Z")
SUM_MAX = 9223372036854775807          # ten-thousandths: 922337203685477.5807
OTHER_KEY = b"(other)"


def cut_value(v):
    """A --by value as its VARBINARY(255) column keeps it: 255 bytes, or
    back to the start of a UTF-8 character cut there (at most 3 bytes)."""
    if len(v) <= 255:
        return v
    n = 255
    for _ in range(3):
        if v[n] & 0xC0 != 0x80:
            break
        n -= 1
    return v[:n] if v[n] & 0xC0 != 0x80 else v[:255]


def sum_units(text):
    """A --sum value in ten-thousandths, or None when it is no number."""
    if text is None:
        return None
    m = SUM_TEXT.match(text)
    if not m:
        return None
    units = int(m.group(2)) * 10000 + int((m.group(3) or b"").ljust(4, b"0"))
    if units > SUM_MAX:
        return None
    return -units if m.group(1) else units


class Format:
    """One job's (or one replay table's) parse settings."""

    def __init__(self, time="default", bucket="1m", levels="ERROR", by=None, sum=None,
                 input="text", time_field=None, level_field=None):
        self.input = input
        self.time_field = time_field
        self.level_field = level_field
        self.time = time
        self.bucket = {"1m": 1, "5m": 5, "1h": 60}[bucket]
        self.levels = set(levels.split(",")) if isinstance(levels, str) else set(levels)
        self.by = by.split(",") if by else []
        self.sum = sum
        # --by word or --sum n need the pattern; --by level alone does not.
        # Structured records name their fields by path (records.py).
        self.pattern = input == "text" and (bool(sum) or any(f != "level" for f in self.by))
        assert not self.pattern or time == "default"
        self.fields = None    # the last counted line's (key, sum units)

    @property
    def keyed(self):
        return bool(self.by or self.sum)

    def line(self, line):
        """(kind, bucket minute or None) of one line (bytes, no newline);
        with --by or --sum, a counted line's key and sum in self.fields."""
        if self.input in ("json", "logfmt"):
            import records
            kind, minute, _, key, units = (records.json_record if self.input == "json"
                                           else records.logfmt_record)(self, line)
            if kind == ERROR and self.keyed:
                self.fields = (key, units)
            return kind, minute if kind == ERROR else None
        fields = None
        if self.pattern:
            m = FIELDS_LINE.match(line)
            if not m:
                return MALFORMED, None
            y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
            if not valid_civil(y, mo, d, h, mi, s):
                return MALFORMED, None
            minute = civil_minute(y, mo, d, h, mi)
            level = m.group(7)
            fields = {"level": level, "word": m.group(8) or b"", "n": m.group(9)}
        elif self.time == "iso8601":
            m = ISO_LINE.match(line)
            if not m:
                return MALFORMED, None
            t = ISO_TIME.match(m.group(1))
            if not t:
                return MALFORMED, None
            y, mo, d, h, mi, s = (int(g) for g in t.groups()[:6])
            if not valid_civil(y, mo, d, h, mi, s):
                return MALFORMED, None
            offset = 0
            z = t.group(7)
            if z and z != b"Z":
                oh, om = int(z[1:3]), int(z[4:6])
                if oh > 23 or om > 59:
                    return MALFORMED, None
                offset = (oh * 60 + om) * (-1 if z[:1] == b"-" else 1)
            minute = civil_minute(y, mo, d, h, mi) - offset
            level = m.group(2)
        else:
            m = DEFAULT_LINE.match(line)
            if not m:
                return MALFORMED, None
            y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
            if not valid_civil(y, mo, d, h, mi, s):
                return MALFORMED, None
            minute = civil_minute(y, mo, d, h, mi)
            level = m.group(7)
        minute -= minute % self.bucket
        # What DATETIME cannot hold is malformed, whatever the level, not a
        # poison pill.
        if not DATETIME_MIN <= minute <= DATETIME_MAX:
            return MALFORMED, None
        if level.decode() not in self.levels:
            return OTHER, None
        if self.keyed:
            fields = fields or {"level": level}
            key = tuple(cut_value(fields[f]) for f in self.by)
            if key and all(v == OTHER_KEY for v in key):
                return MALFORMED, None
            units = sum_units(fields[self.sum]) if self.sum else 0
            if units is None:
                return MALFORMED, None
            self.fields = (key, units)
        return ERROR, minute

    def records(self, value):
        """(number, raw or None, kind) of each line of a value (bytes, not
        empty): its number counting every '\\n' from 1; otlp-json: each log
        record of the request (raw None: any bytes), or the request as one
        malformed line."""
        if self.input == "otlp-json":
            import records
            for kind, _, _, _, _, number, raw in records.otlp_records(self, value):
                yield number, raw, kind
            return
        for number, line in enumerate(value.split(b"\n"), 1):
            if line.endswith(b"\r"):
                line = line[:-1]
            if line:
                yield number, line, self.line(line)[0]

    def value(self, value, counts):
        """Adds the ERROR lines of one record value (bytes or None) to counts."""
        if not value:
            return
        if self.input == "otlp-json":
            import records
            for kind, minute, _, key, units, _, _ in records.otlp_records(self, value):
                if kind == ERROR and self.keyed:
                    n, total = counts.get((minute, key), (0, 0))
                    counts[(minute, key)] = (n + 1, total + units)
                elif kind == ERROR:
                    counts[minute] = counts.get(minute, 0) + 1
            return
        for line in value.split(b"\n"):
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                continue
            kind, minute = self.line(line)
            if kind == ERROR and self.keyed:
                key, units = self.fields
                n, total = counts.get((minute, key), (0, 0))
                counts[(minute, key)] = (n + 1, total + units)
            elif kind == ERROR:
                counts[minute] = counts.get(minute, 0) + 1


def out_of_range_iso(line):
    """True for an iso8601 line whose UTC minute DATETIME cannot hold
    (the poison pill), whatever the levels: the generator's filter."""
    m = ISO_LINE.match(line)
    t = ISO_TIME.match(m.group(1)) if m else None
    if not t:
        return False
    y, mo, d, h, mi, s = (int(g) for g in t.groups()[:6])
    if not valid_civil(y, mo, d, h, mi, s):
        return False
    z, offset = t.group(7), 0
    if z and z != b"Z":
        oh, om = int(z[1:3]), int(z[4:6])
        if oh > 23 or om > 59:
            return False
        offset = (oh * 60 + om) * (-1 if z[:1] == b"-" else 1)
    minute = civil_minute(y, mo, d, h, mi) - offset
    return not DATETIME_MIN <= minute <= DATETIME_MAX


def selftest():
    """A few cases from the manual, checked by hand: the judge judged."""
    f = Format()
    assert f.line(b"2017-07-30 14:09:08 ERROR some message") == (ERROR, civil_minute(2017, 7, 30, 14, 9))
    assert minute_text(civil_minute(2017, 7, 30, 14, 9)) == "2017-07-30 14:09:00"
    assert f.line(b"2017-07-30 14:09:08 ERROR")[0] == ERROR
    assert f.line(b"2017-07-30 14:09:08 error x")[0] == OTHER
    assert f.line(b"2017-07-30 14:09:08 ERRORS x")[0] == OTHER
    assert f.line(b"2017-07-30 14:09:08  ERROR x")[0] == MALFORMED
    assert f.line(b" 2017-07-30 14:09:08 ERROR x")[0] == MALFORMED
    assert f.line(b"2017-02-30 14:09:08 ERROR x")[0] == MALFORMED
    assert f.line(b"2017-07-30 24:00:00 ERROR x")[0] == MALFORMED
    assert f.line(b"0999-07-30 14:09:08 ERROR x")[0] == MALFORMED
    assert f.line(b"2017-07-30 14:09:08 123 x")[0] == MALFORMED
    assert f.line(b"2017-07-30 14:09:08 ERROR1")[0] == MALFORMED
    assert f.line(b"2017-07-30 14:09:08 ERROR\r")[0] == MALFORMED
    assert f.line(b"2016-02-29 23:59:59 ERROR \xff\x00")[0] == ERROR
    c = {}
    f.value(b"2017-07-30 14:09:08 ERROR a\r\n\n2017-07-30 14:09:59 ERROR\r\r\n", c)
    assert c == {civil_minute(2017, 7, 30, 14, 9): 1}, c
    iso = Format("iso8601", "1h", "ERROR,FATAL")
    assert iso.line(b"2017-07-30T14:09:08.5+02:00 FATAL x") == (ERROR, civil_minute(2017, 7, 30, 12, 0))
    assert iso.line(b"9999-12-31T23:59:59-01:00 ERROR x")[0] == MALFORMED
    assert out_of_range_iso(b"9999-12-31T23:59:59-01:00 ERROR x")
    assert not out_of_range_iso(b"2017-07-30T14:09:08Z ERROR x")
    g = Format("default", "1m", "ERROR,WARN", by="level,word", sum="n")
    m0 = civil_minute(2017, 7, 30, 14, 9)
    c = {}
    g.value(b"2017-07-30 14:09:08 ERROR disk full 12\n2017-07-30 14:09:09 WARN disk 1.5\n"
            b"2017-07-30 14:09:10 ERROR disk x\n2017-07-30 14:09:11 ERROR disk\n"
            b"2017-07-30 14:09:12 INFO disk x\n2017-07-30 14:09:13 ERROR1 x 1\n"
            b"2017-07-30 14:09:14 ERROR  -3\n2017-07-30 14:09:15 ERROR a b 922337203685477.5808", c)
    assert c == {(m0, (b"ERROR", b"disk")): (1, 120000), (m0, (b"WARN", b"disk")): (1, 15000),
                 (m0, (b"ERROR", b"")): (1, -30000)}, c
    assert Format(by="word").line(b"2017-07-30 14:09:08 ERROR (other) x")[0] == MALFORMED
    assert Format(by="level,word").line(b"2017-07-30 14:09:08 ERROR (other) x")[0] == ERROR
    assert cut_value(b"a" * 254 + b"\xc3\xa9") == b"a" * 254
    assert cut_value(b"a" * 300) == b"a" * 255
    assert cut_value(b"a" * 252 + b"\x80" * 10) == b"a" * 252 + b"\x80" * 3
    assert sum_units(b"0000.5") == 5000 and sum_units(b"-0") == 0 and sum_units(b"1.23456") is None


if __name__ == "__main__":
    selftest()
    print("lines.py: ok")
