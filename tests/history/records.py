"""The judge of structured records: an independent reference of the rules
of ktally-run(1), STRUCTURED RECORDS (src/man/ktally-run.1.in), for the
inputs json, logfmt and otlp-json.

Written from the manual, not from the C code, and meant to be obviously
right rather than fast: JSON is read by Python's json module made strict
(no NaN or Infinity, numbers kept as written, members kept in text order
so that "the last in the text wins" can be said literally), then checked
for what RFC 8259 allows and the manual does not (NUL and lone surrogates
in strings, nesting past 64); logfmt by go-logfmt's grammar written out
again here; times by their own decimal arithmetic. A record is judged to
a (kind, minute, level, fields) where kind is ERROR, OTHER or MALFORMED.
"""
import json
import re

from lines import DATETIME_MAX, DATETIME_MIN, ERROR, MALFORMED, OTHER, civil_minute, valid_civil

DEPTH = 64

# The inputs' default paths (the manual's lists), as lists of names.
JSON_TIME = [["@timestamp"], ["timestamp"], ["time"], ["ts"], ["Timestamp"]]
JSON_LEVEL = [["log", "level"], ["level"], ["severity"], ["severity_text"], ["SeverityText"],
              ["severity_number"], ["SeverityNumber"]]
LOGFMT_TIME = ["ts", "time", "timestamp", "@timestamp"]
LOGFMT_LEVEL = ["level", "lvl", "severity", "log.level"]
OTEL_NAMES = ("severityNumber", "severity_number", "SeverityNumber")

PINO = {10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL"}
OTEL = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"]


class Num:
    """A JSON number as written."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return "Num(%s)" % self.text


class Obj:
    """A JSON object: its members in text order, repeats kept."""

    def __init__(self, pairs):
        self.pairs = pairs

    def all(self, name):
        return [v for k, v in self.pairs if k == name]

    def last(self, name, default=None):
        found = self.all(name)
        return found[-1] if found else default


class Bad(Exception):
    """A record that is malformed, and why."""

    def __init__(self, why):
        super().__init__(why)
        self.why = why


def _reject_constant(name):
    raise ValueError("no %s in RFC 8259" % name)


DECODER = json.JSONDecoder(object_pairs_hook=Obj, parse_float=Num, parse_int=Num,
                           parse_constant=_reject_constant, strict=True)


def _check(v, depth):
    """Nesting, and each string's characters (keys too)."""
    if isinstance(v, (Obj, list)):
        if depth + 1 > DEPTH:
            raise Bad("depth")
        items = v.pairs if isinstance(v, Obj) else [(None, x) for x in v]
        for k, x in items:
            if k is not None:
                _check_string(k)
            _check(x, depth + 1)
    elif isinstance(v, str):
        _check_string(v)


def _check_string(s):
    if "\x00" in s:
        raise Bad("nul")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in s):
        raise Bad("surrogate")


def parse_json(data):
    """One strict RFC 8259 text (bytes) as Obj/list/str/Num/bool/None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Bad("utf8")
    try:
        v = DECODER.decode(text)
    except RecursionError:
        raise Bad("depth")
    except ValueError:
        raise Bad("json")
    # decode() skips json's white space, RFC 8259's four, around the value
    # and refuses anything else after it.
    _check(v, 0)
    return v


def find(v, names):
    """Every value at path @names in @v, in text order; a member whose
    name holds dots is also the path of those names (json only)."""
    if not isinstance(v, Obj) or not names:
        return
    for k, x in v.pairs:
        for n in range(1, len(names) + 1):
            if k == ".".join(names[:n]):
                if n == len(names):
                    yield x
                else:
                    yield from find(x, names[n:])


def last_at(v, names):
    found = list(find(v, names))
    return found[-1] if found else None


MISSING = object()


# ---- Times -----------------------------------------------------------------

RFC3339 = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})"
                     r"(?:[.,][0-9]+)?(Z|z|[+-][0-9]{2}(?::?[0-9]{2})?)?\Z")
NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?\Z")


def epoch_minute(text, unit=None):
    """The UTC minute of an epoch number's text, or "time" / "range"."""
    m = NUMBER.match(text)
    if not m:
        return "time"
    sign, whole, frac, exp = m.groups()
    digits = whole + (frac or "")
    point = len(whole) + int(exp or 0)
    # Strip leading zeros: they move nothing.
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped
    if not digits:
        return 0
    if unit is None:
        if point <= 11:
            unit = 0
        elif point <= 14:
            unit = 3
        elif point <= 17:
            unit = 6
        elif point <= 20:
            unit = 9
        else:
            return "range"
    keep = point - unit
    if keep > 11:
        return "range"
    if keep <= 0:
        whole_s, rest = 0, any(c != "0" for c in digits)
    else:
        head = digits[:keep].ljust(keep, "0")
        whole_s, rest = int(head), any(c != "0" for c in digits[keep:])
    seconds = -(whole_s + (1 if rest else 0)) if sign else whole_s
    return seconds // 60


def text_minute(text):
    if len(text) >= 5 and text[4] == "-":
        m = RFC3339.match(text)
        if not m:
            return "time"
        y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
        if not (1 <= mo <= 12 and 1 <= d <= 31 and h <= 23 and mi <= 59 and s <= 60):
            return "time"
        # valid_civil's years are DATETIME's; the calendar repeats every
        # 400 years, so 2000 + y has the leap days of a year y below 1000.
        if not valid_civil(y if y >= 1000 else y + 2000, mo, d, h, mi, s):
            return "time"
        z = m.group(7)
        offset = 0
        if z and z not in ("Z", "z"):
            oh = int(z[1:3])
            om = int(z[-2:]) if len(z) > 3 else 0
            if oh > 23 or om > 59:
                return "time"
            offset = (oh * 60 + om) * (-1 if z[0] == "-" else 1)
        return civil_minute(y, mo, d, h, mi) - offset
    return epoch_minute(text)


# ---- Levels ----------------------------------------------------------------

INTEGER = re.compile(r"-?[0-9]+\Z")


def number_level(text, otel):
    if not INTEGER.match(text):
        return None
    n = int(text)
    if not otel and n in PINO:
        return PINO[n]
    if otel and n == 0:
        return "UNSPECIFIED"
    if otel and 1 <= n <= 24:
        return OTEL[(n - 1) // 4]
    return text


# ---- One record's fields to what it counts ---------------------------------

def field_bytes(v):
    """A --by value's bytes; "type" for an object or array."""
    if v is None or v is MISSING:
        return b""
    if isinstance(v, bool):
        return b"true" if v else b"false"
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, Num):
        return v.text.encode()
    return "type"


def ascii_fold(text):
    """@text's UTF-8 bytes, ASCII letters in lower case, the rest as they are."""
    return bytes(c + 32 if 0x41 <= c <= 0x5A else c for c in text.encode("utf-8"))


def judge(fmt, time, time_unit, level, otel, fields, sums):
    """(kind, minute, why, key, units) of a record's fields: time and level
    (MISSING when absent), --by values by field (level aside), --sum
    values."""
    from lines import OTHER_KEY, cut_value, sum_units
    if time is MISSING:
        return MALFORMED, None, "missing", None, None
    if isinstance(time, str):
        minute = epoch_minute(time, time_unit) if time_unit is not None else text_minute(time)
    elif isinstance(time, Num):
        minute = epoch_minute(time.text, time_unit)
    else:
        return MALFORMED, None, "type", None, None
    if isinstance(minute, str):
        return MALFORMED, None, minute, None, None
    minute -= minute % fmt.bucket
    if not DATETIME_MIN <= minute <= DATETIME_MAX:
        return MALFORMED, None, "range", None, None
    if level is MISSING:
        return MALFORMED, None, "missing", None, None
    if isinstance(level, str):
        name = level
    elif isinstance(level, Num):
        name = number_level(level.text, otel)
        if name is None:
            return MALFORMED, None, "type", None, None
    else:
        return MALFORMED, None, "type", None, None
    if not any(ascii_fold(name) == ascii_fold(lv) for lv in fmt.levels):
        return OTHER, minute, None, None, None
    if not fmt.keyed:
        return ERROR, minute, None, None, None
    key = []
    for f in fmt.by:
        if f == "level":
            v = name.encode("utf-8")
            v = bytes(c - 32 if 0x61 <= c <= 0x7A else c for c in v)
        else:
            v = field_bytes(fields.get(f, MISSING))
            if v == "type":
                return MALFORMED, None, "type", None, None
        key.append(cut_value(v))
    if key and all(v == OTHER_KEY for v in key):
        return MALFORMED, None, "field", None, None
    units = 0
    if fmt.sum:
        s = sums.get(fmt.sum, MISSING)
        text = s.encode() if isinstance(s, str) else s.text.encode() if isinstance(s, Num) else None
        units = sum_units(text)
        if units is None:
            return MALFORMED, None, "field", None, None
    return ERROR, minute, None, tuple(key), units


def split_path(path):
    """A path's names, as field-path.h reads it: dots separate, a backslash
    makes the next character part of a name."""
    names, cur, i = [], "", 0
    while i < len(path):
        c = path[i]
        if c == "\\":
            cur += path[i + 1]
            i += 2
            continue
        if c == ".":
            names.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    names.append(cur)
    return names


# ---- json ---------------------------------------------------------------------

def json_record(fmt, line):
    try:
        v = parse_json(line)
    except Bad as b:
        return MALFORMED, None, b.why, None, None
    if not isinstance(v, Obj):
        return MALFORMED, None, "shape", None, None
    time_paths = [split_path(fmt.time_field)] if fmt.time_field else JSON_TIME
    level_paths = [split_path(fmt.level_field)] if fmt.level_field else JSON_LEVEL
    time = level = MISSING
    otel = False
    for p in time_paths:
        found = list(find(v, p))
        if found:
            time = found[-1]
            break
    for p in level_paths:
        found = list(find(v, p))
        if found:
            level, otel = found[-1], p[-1] in OTEL_NAMES
            break
    fields = {}
    for f in fmt.by:
        if f != "level":
            found = list(find(v, split_path(f)))
            fields[f] = found[-1] if found else MISSING
    sums = {}
    if fmt.sum:
        found = list(find(v, split_path(fmt.sum)))
        sums[fmt.sum] = found[-1] if found else MISSING
    return judge(fmt, time, None, level, otel, fields, sums)


# ---- logfmt -------------------------------------------------------------------

def logfmt_pairs(line):
    """go-logfmt's pairs of a line (bytes): [(key, value)], value None for a
    key alone; raises Bad."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise Bad("utf8")
    pairs, i, n = [], 0, len(text)
    ident = lambda c: c > " " and c not in '="'
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i == n:
            return pairs
        if text[i] < " ":
            raise Bad("nul" if text[i] == "\x00" else "shape")
        j = i
        while j < n and ident(text[j]):
            j += 1
        if j == i or (j < n and text[j] == '"'):
            raise Bad("shape")
        if j < n and text[j] < " " and text[j] != "\t":
            raise Bad("nul" if text[j] == "\x00" else "shape")
        key = text[i:j]
        if j < n and text[j] == "=":
            j += 1
            if j < n and text[j] == '"':
                # A JSON string, then a space, a tab or the end.
                k = j + 1
                while True:
                    q = text.find('"', k)
                    if q < 0:
                        raise Bad("shape")
                    s = text.find("\\", k, q)
                    if s < 0:
                        break
                    k = s + 2
                    if k > n:
                        raise Bad("shape")
                try:
                    value = parse_json(text[j:q + 1].encode("utf-8"))
                except Bad as b:
                    raise Bad("shape" if b.why == "json" else b.why)
                j = q + 1
                if j < n and text[j] not in " \t":
                    raise Bad("shape")
            else:
                k = j
                while k < n and ident(text[k]):
                    k += 1
                if k < n and text[k] in '="':
                    raise Bad("shape")
                if k < n and text[k] < " " and text[k] != "\t":
                    raise Bad("nul" if text[k] == "\x00" else "shape")
                value = text[j:k]
                j = k
        else:
            value = None
        pairs.append((key, value))
        i = j


def logfmt_record(fmt, line):
    try:
        pairs = logfmt_pairs(line)
    except Bad as b:
        return MALFORMED, None, b.why, None, None
    last = {}
    for k, v in pairs:
        last[k] = v
    key_of = lambda path: ".".join(split_path(path))
    time = level = MISSING
    for k in ([key_of(fmt.time_field)] if fmt.time_field else LOGFMT_TIME):
        if k in last:
            time = last[k]
            break
    otel = False
    for k in ([key_of(fmt.level_field)] if fmt.level_field else LOGFMT_LEVEL):
        if k in last:
            level, otel = last[k], k.split(".")[-1] in OTEL_NAMES
            break
    # A key alone is null: a type error as a time or a level.
    time = False if time is None else time
    level = False if level is None else level
    fields = {f: last.get(key_of(f), MISSING) for f in fmt.by if f != "level"}
    sums = {fmt.sum: last.get(key_of(fmt.sum), MISSING)} if fmt.sum else {}
    return judge(fmt, time, None, level, otel, fields, sums)


# ---- otlp-json ----------------------------------------------------------------

ANY = ["stringValue", "intValue", "doubleValue", "boolValue", "bytesValue", "arrayValue",
       "kvlistValue"]


def any_value(values):
    """An attribute's AnyValue (its "value" members, @values) as a --by or
    --sum value: of each kind the last found, and of the kinds present the
    last in the manual's order; arrays and lists an object (no key);
    none: null."""
    out = None
    for kind in ANY:
        found = [x for v in values if isinstance(v, Obj) for x in v.all(kind)]
        if found:
            out = found[-1] if kind not in ("arrayValue", "kvlistValue") else Obj([])
    return out


def attributes(holder, wanted):
    """The attributes of @holder (a resource or a record) whose keys are
    @wanted, the last of a key winning: key -> value."""
    out = {}
    if not isinstance(holder, Obj):
        return out
    for lst in holder.all("attributes"):
        if not isinstance(lst, list):
            continue
        for a in lst:
            if not isinstance(a, Obj):
                continue
            k = a.last("key")
            if isinstance(k, str) and k in wanted:
                out[k] = any_value(a.all("value"))
    return out


def is_zero(v):
    return v is MISSING or (isinstance(v, str) and v == "0") or (isinstance(v, Num) and v.text == "0")


def otlp_records(fmt, value):
    """[(kind, minute, why, key, units, number, raw)] of a request: each
    log record (raw None: its bytes are a slice this oracle does not
    track), or one malformed whole (number 1, raw the request) when it is
    not one."""
    try:
        v = parse_json(value)
    except Bad as b:
        return [(MALFORMED, None, b.why, None, None, 1, value)]
    if not isinstance(v, Obj):
        return [(MALFORMED, None, "shape", None, None, 1, value)]
    whole_type = [(MALFORMED, None, "type", None, None, 1, value)]
    rls = v.all("resourceLogs")
    if rls and not isinstance(rls[-1], list):
        return whole_type
    key_of = lambda path: ".".join(split_path(path))
    wanted = {key_of(f) for f in fmt.by if f != "level"}
    if fmt.sum:
        wanted.add(key_of(fmt.sum))
    records = []     # (record, resource attributes)
    for rl in rls:
        if not isinstance(rl, list):
            continue
        for resource in rl:
            if not isinstance(resource, Obj):
                return whole_type
            scopes = resource.all("scopeLogs")
            if scopes and not isinstance(scopes[-1], list):
                return whole_type
            res_attrs = {}
            for r in resource.all("resource"):
                res_attrs.update(attributes(r, wanted))
            for sl in scopes:
                if not isinstance(sl, list):
                    continue
                for scope in sl:
                    if not isinstance(scope, Obj):
                        return whole_type
                    lrs = scope.all("logRecords")
                    if lrs and not isinstance(lrs[-1], list):
                        return whole_type
                    for lr in lrs:
                        if isinstance(lr, list):
                            records.extend((rec, res_attrs) for rec in lr)
    out = []
    for number, (rec, res_attrs) in enumerate(records, 1):
        # A record's own bytes are a slice of the request this oracle does
        # not track (Python's json keeps no places): None, any bytes.
        if not isinstance(rec, Obj):
            out.append((MALFORMED, None, "type", None, None, number, None))
            continue
        time = rec.last("timeUnixNano", MISSING)
        if is_zero(time):
            time = rec.last("observedTimeUnixNano", MISSING)
            if is_zero(time):
                time = MISSING
        text = rec.last("severityText", MISSING)
        number_v = rec.last("severityNumber", MISSING)
        if isinstance(text, str) and text:
            level = text
        elif text is not MISSING and not isinstance(text, str):
            level = Obj([])
        elif isinstance(number_v, str):
            m = re.match(r"SEVERITY_NUMBER_(UNSPECIFIED|TRACE|DEBUG|INFO|WARN|ERROR|FATAL)([2-4]?)\Z",
                         number_v)
            level = m.group(1) if m and not (m.group(1) == "UNSPECIFIED" and m.group(2)) else Obj([])
        elif number_v is MISSING:
            level = Num("0")
        else:
            level = number_v
        attrs = dict(res_attrs)
        attrs.update(attributes(rec, wanted))
        fields = {f: attrs.get(key_of(f), MISSING) for f in fmt.by if f != "level"}
        sums = {fmt.sum: attrs.get(key_of(fmt.sum), MISSING)} if fmt.sum else {}
        kind, minute, why, key, units = judge(fmt, time, 9, level, True, fields, sums)
        out.append((kind, minute, why, key, units, number, None))
    return out


def selftest():
    """Cases from the manual, checked by hand."""
    from lines import Format
    j = Format(input="json", levels="ERROR,WARN")
    m0 = civil_minute(2024, 5, 1, 12, 34)
    assert j.line(b'{"@timestamp":"2024-05-01T12:34:56Z","log.level":"error"}') == (ERROR, m0)
    assert j.line(b'{"log":{"level":"Warn"},"time":1714566896789}') == (ERROR, m0)
    assert j.line(b'{"level":50,"ts":"1714566896"}') == (ERROR, m0)
    assert j.line(b'{"level":17,"ts":1714566896}')[0] == OTHER
    assert j.line(b'{"severity_number":17,"ts":1.714566896e9}') == (ERROR, m0)
    assert j.line(b'{"level":"error","ts":1714566896,"level":"info"}')[0] == OTHER
    assert j.line(b'{"level":"error","ts":1714566896,"x":"\\u0000"}')[0] == MALFORMED
    assert j.line(b'{"level":"error","ts":1714566896,"x":"\\ud800"}')[0] == MALFORMED
    assert j.line(b'{"level":"error","ts":1714566896,"x":"\\ud83d\\ude00"}') == (ERROR, m0)
    assert j.line(b'{"level":"error","ts":1714566896,"x":' + b"[" * 63 + b"]" * 63 + b"}")[0] == ERROR
    assert j.line(b'{"level":"error","ts":1714566896,"x":' + b"[" * 64 + b"]" * 64 + b"}")[0] == MALFORMED
    assert j.line(b'{"level":"error","ts":NaN}')[0] == MALFORMED
    assert j.line(b'{"level":"error","ts":"0999-12-31T23:59:59Z"}')[0] == MALFORMED
    assert j.line(b'{"level":"error","ts":"2024-02-30T00:00:00Z"}')[0] == MALFORMED
    assert j.line(b'{"level":"error","ts":"2024-05-01T14:34:56+0200"}') == (ERROR, m0)
    assert j.line(b'{"level":"error","ts":-0.5}') == (ERROR, -1)
    assert epoch_minute("86400000") == 86400000 // 60
    assert epoch_minute("1714566896123456789") == 1714566896 // 60
    assert epoch_minute("100000000000000000000") == "range"
    k = Format(input="json", by="level,service.name", sum="http.bytes")
    assert k.line(b'{"ts":1714566896,"level":"error","service":{"name":"a"},"http.bytes":"1.5"}') \
        == (ERROR, m0) and k.fields == ((b"ERROR", b"a"), 15000)
    assert k.line(b'{"ts":1714566896,"level":"error","service.name":[],"http.bytes":1}')[0] == MALFORMED
    lf = Format(input="logfmt", by="svc", sum="bytes")
    assert lf.line(b'ts=2024-05-01T12:34:56Z level=error svc="a b" bytes=2') == (ERROR, m0)
    assert lf.fields == ((b"a b",), 20000)
    assert lf.line(b'ts=1714566896 level=error svc bytes=2')[0] == ERROR and lf.fields[0] == (b"",)
    assert lf.line(b'ts=1714566896 level=error a=b=c bytes=2')[0] == MALFORMED
    assert lf.line(b'ts=1714566896 level=error msg="x"y bytes=2')[0] == MALFORMED
    o = Format(input="otlp-json", by="service.name")
    req = (b'{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1714566896000000000",'
           b'"severityNumber":17},3,{"severityText":"ERROR"}]}],"resource":{"attributes":'
           b'[{"key":"service.name","value":{"stringValue":"api"}}]}}]}')
    got = [(r[0], r[5]) for r in otlp_records(o, req)]
    assert got == [(ERROR, 1), (MALFORMED, 2), (MALFORMED, 3)], got
    c = {}
    o.value(req, c)
    assert c == {(m0, (b"api",)): (1, 0)}, c


if __name__ == "__main__":
    selftest()
    print("records.py: ok")
