"""The judge of log lines: an independent reference of ktally's line rules.

Written from README.md ("Input format", "Any log format") and meant to be
obviously right rather than fast: a record's value is split on b"\\n", one
trailing b"\\r" is dropped per line, empty lines are not lines, and a line
is ERROR (counted in its bucket), OTHER or MALFORMED.

Formats drawn by the checker: the default one, and the default line shape
with --time-format iso8601; each with --bucket 1m|5m|1h and --levels.
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
            and 0 <= h <= 23 and 0 <= mi <= 59 and 0 <= s <= 59)


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


class Format:
    """One job's (or one replay table's) parse settings."""

    def __init__(self, time="default", bucket="1m", levels="ERROR"):
        self.time = time
        self.bucket = {"1m": 1, "5m": 5, "1h": 60}[bucket]
        self.levels = set(levels.split(",")) if isinstance(levels, str) else set(levels)

    def line(self, line):
        """(kind, bucket minute or None) of one line (bytes, no newline)."""
        if self.time == "iso8601":
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
        if level.decode() not in self.levels:
            return OTHER, None
        minute -= minute % self.bucket
        # What DATETIME cannot hold is malformed, not a poison pill (#11.9).
        if not DATETIME_MIN <= minute <= DATETIME_MAX:
            return MALFORMED, None
        return ERROR, minute

    def value(self, value, counts):
        """Adds the ERROR lines of one record value (bytes or None) to counts."""
        if not value:
            return
        for line in value.split(b"\n"):
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                continue
            kind, minute = self.line(line)
            if kind == ERROR:
                counts[minute] = counts.get(minute, 0) + 1


def out_of_range_iso(line):
    """True for an iso8601 line whose UTC minute DATETIME cannot hold
    (the #11.9 poison pill), whatever the levels: the generator's filter."""
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
    """A few cases from README.md, checked by hand: the judge judged."""
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


if __name__ == "__main__":
    selftest()
    print("lines.py: ok")
