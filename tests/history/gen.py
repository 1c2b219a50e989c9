"""The generator: a seeded history of operations over ktally.

A history is plain data (a dict), so that it can be printed, shrunk and run
again: the set-up (topics, databases, jobs) and a list of operations, each
a dict with "op". Everything random is drawn here, from the seed; the runner
only carries the operations out (clamping replay ranges and rewinds to what
was produced, so that a shrunk history stays valid).

Expectations that today's ktally does not meet are named in known_open.py;
`open_` is the set of those still held back (the generator does not draw
their combinations).
"""
import random

from known_open import KNOWN_OPEN

LOG, LEDGER = "log", "ledger"

# Invalid combinations that today's ktally refuses (exit 2, one line).
INVALID_RUN = [
    "offsets-kafka-transactional", "group-and-partitions", "group-offsets-kafka",
    "ledger-idempotent", "partitions-beyond", "bad-bucket", "bad-interval",
    "small-byte-cap", "workers-0", "multi-topic-no-job", "wrong-mode",
    "bad-job-name",
]
# Refused --by/--sum/--max-keys/--table combinations, drawn like the
# others, and often under --focus analytics.
INVALID_ANALYTICS = [
    "by-log-time", "max-keys-no-by", "sum-not-a-group", "by-ledger", "by-twice",
    "max-keys-zero", "table-not-identifier", "sum-no-pattern",
]
INVALID_REPLAY = [
    "replay-from-after-until", "replay-beyond-high", "replay-unknown-partition",
    "replay-bad-table", "replay-error_log-idempotent", "replay-partition-twice",
]
INVALID_INITDB = ["initdb-wrong-mode"]
# Structured inputs' settings that could never match or are no setting:
# refused (exit 2, one line), by `run` and by `config --check` alike.
INVALID_INPUT = ["input-unknown", "input-with-pattern", "input-with-time-format",
                 "otlp-level-field", "otlp-time-field", "text-time-field", "logfmt-key-space",
                 "input-bad-path", "input-by-collide"]
# What the structured jobs' records are (--input), when not text lines.
INPUTS = ["json", "logfmt", "otlp-json"]
# Job management used wrong: refused with exit 2 and one line.
INVALID_MANAGE = ["reset-unknown-job", "reset-dry-and-execute", "reset-rebuild-not-earliest",
                  "reset-beyond-high", "reset-bad-to", "forget-unknown-job",
                  "status-unknown-job"]
# Tables that collide: a job's table where another job's view
# is, or its view where a table is, a view over something else, a name of
# ktally's own tables; each refused with exit 2 before anything is created.
INVALID_COLLIDE = ["collide-view-as-table", "collide-topic-as-table", "collide-view-is-table",
                   "collide-table-of-transactional", "collide-topic-is-view",
                   "collide-foreign-view", "own-table-name"]
# Time formats that cannot place a line in time, refused by
# run at start and by config --check.
INVALID_TIME_FORMAT = ["time-format-no-date", "time-format-no-conversion"]
NO_DATE_FORMATS = ["%H:%M:%S", "%T", "%Y %H:%M", "%b %H:%M:%S", "%Y-%m %H:%M", "%F", "%F %H"]
NO_CONVERSION_FORMATS = ["ISO8601", "Syslog", "SYSLOG", "today", "%%", "Y-m-d"]


class Gen:
    def __init__(self, seed, open_=None, focus=None, ops=(8, 24), kafka="mock", mysql="single"):
        self.r = random.Random(seed)
        # The services' own faults: Apache Kafka's (transactional producers,
        # broker processes killed and paused) and Galera's (nodes killed and
        # left down), each from a stream of its own (on Galera, MariaDB
        # faults are drawn more often than on one server).
        self.kafka, self.mysql = kafka, mysql
        self.r_apache = random.Random("%s:apache" % seed)
        self.r_galera = random.Random("%s:galera" % seed)
        self.mysql_down = None      # the Galera node a kill left down
        self.open_txn = None        # the topic of the transaction left open
        # Axes added later draw from their own stream, so that a seed
        # keeps drawing the history it always drew (saved seeds, mutants).
        self.r_log = random.Random("%s:log-format" % seed)
        self.r_reload = random.Random("%s:reload" % seed)
        self.r_spell = random.Random("%s:spelling" % seed)
        self.r_collide = random.Random("%s:collide" % seed)
        self.r_health = random.Random("%s:health" % seed)
        # Draws added later take a stream of their own: every earlier
        # seed keeps drawing the history it drew.
        self.r_dead = random.Random("%s:dead-letters" % seed)
        # Which table name a refused name is (one rule for every table a
        # job names: --table, --dead-letters, idempotent mode's NAME_topic).
        self.r_names = random.Random("%s:table-names" % seed)
        self.r_env = random.Random("%s:env" % seed)
        # Moments (replays by time, moves to before 1970, recounts by
        # time), resets of replays' jobs, --audit-keep.
        self.r_time = random.Random("%s:time" % seed)
        self.r_fold = random.Random("%s:fold" % seed)
        # The input of a history's log topics and count jobs (text lines,
        # or structured records of one input), and its refusals.
        self.r_input = random.Random("%s:input" % seed)
        # Which databases' hosts lists name, last, an unrelated server (a
        # second private MariaDB holding a ktally database of the same
        # name): ktally must refuse it, and never write there.
        self.r_foreign = random.Random("%s:foreign-server" % seed)
        # How a database's server is spelled (localhost:PORT is TCP to that
        # port, as 127.0.0.1:PORT), and which invalid runs are a config
        # file whose [mysql] would drop a TLS setting.
        self.r_dbspell = random.Random("%s:db-spelling" % seed)
        self.seed = seed
        self.open = set(KNOWN_OPEN) if open_ is None else set(open_)
        self.focus = focus
        self.n_ops = ops

    def on(self, name):
        """True when the combination of known-open entry NAME may be drawn."""
        return name not in self.open

    def chance(self, p, name=None):
        """A draw with probability p; much more likely when focusing on NAME."""
        if name is not None and self.focus == name:
            p = max(p, 0.8)
        return self.r.random() < p

    # ------------------------------------------------------------------
    def history(self):
        r = self.r
        h = {"seed": self.seed, "open": sorted(self.open), "topics": [], "dbs": [],
             "jobs": [], "ops": []}
        if self.focus:
            h["focus"] = self.focus
        if self.kafka != "mock":
            h["kafka"] = self.kafka
        if self.mysql != "single":
            h["mysql"] = self.mysql
        # The records of the log topics: text lines, or (drawn from a
        # stream of its own, so older seeds keep their histories) one
        # structured input, json, logfmt or otlp-json, for every log topic
        # and count job of the history.
        ri = self.r_input
        inp = "text"
        if ri.random() < (0.9 if self.focus == "structured" else 0.25):
            inp = ri.choice(INPUTS)
            h["input"] = inp
        # Topics: one or two of log lines, sometimes one of ledger messages.
        n_log = 2 if self.chance(0.3) else 1
        for i in range(n_log):
            h["topics"].append({"id": "t%d" % i, "kind": LOG, "partitions": r.randint(2, 8)})
            if inp != "text":
                h["topics"][-1]["input"] = inp
        if self.on("name-case") and self.chance(0.3, "name-case"):
            # The same name in another case: a different topic for Kafka.
            h["topics"].append({"id": "t0c", "kind": LOG, "partitions": r.randint(2, 6),
                                "case_of": "t0"})
            if inp != "text":
                h["topics"][-1]["input"] = inp
        if self.chance(0.3, "ledger-two-writers"):
            h["topics"].append({"id": "l0", "kind": LEDGER, "partitions": r.randint(2, 6),
                                "keyed": self.chance(0.5) and self.focus != "ledger-two-writers"})
        # Databases: one mode each (one database holds one mode).
        for i in range(2 if self.chance(0.35) else 1):
            idem = self.chance(0.4, "idempotent-kafka-latest") or (
                self.focus in ("idempotent-rewind-off-grid", "idempotent-byte-cap-livelock"))
            fmt = {"time": "iso8601" if self.chance(0.2, "iso8601-out-of-range") else "default",
                   "bucket": r.choice(["1m", "1m", "5m", "1h"]),
                   "levels": "ERROR,FATAL" if self.chance(0.3) else "ERROR",
                   # Spell the default settings out on the command line.
                   "explicit": self.chance(0.2)}
            # Log analytics: dimensions and sums of the database's
            # count tables (lines.py's FIELDS_PATTERN on the default time).
            if self.chance(0.35, "analytics"):
                if fmt["time"] == "default":
                    fmt["by"] = r.choice([None, "level", "word", "level,word", "word,level"])
                    fmt["sum"] = r.choice([None, "n"]) if fmt["by"] else "n"
                else:
                    fmt["by"], fmt["sum"] = "level", None
            if inp != "text":
                # The same draws, read as the input's fields: the service
                # for --by word, its number for --sum n; a time format of
                # text lines has no place here.
                from values import STRUCTURED_BY, STRUCTURED_SUM
                fmt["input"], fmt["time"] = inp, "default"
                if fmt.get("by"):
                    fmt["by"] = fmt["by"].replace("word", STRUCTURED_BY[inp])
                if fmt.get("sum"):
                    fmt["sum"] = STRUCTURED_SUM[inp]
                if inp != "otlp-json" and ri.random() < 0.15:
                    fmt["time_field"] = "ts"
                if inp == "json" and ri.random() < 0.1:
                    fmt["level_field"] = "log.level"
            h["dbs"].append({"id": "d%d" % i, "mode": "idempotent" if idem else "transactional",
                             "format": fmt})
        for d in h["dbs"]:
            if self.r_foreign.random() < (0.9 if self.focus == "foreign-server" else 0.25):
                d["foreign"] = True
            if self.r_dbspell.random() < 0.3:
                d["localhost"] = True
        if any(t["kind"] == LEDGER for t in h["topics"]) and not any(
                d["mode"] == "transactional" for d in h["dbs"]):
            h["dbs"].append({"id": "d%d" % len(h["dbs"]), "mode": "transactional",
                             "format": {"time": "default", "bucket": "1m", "levels": "ERROR",
                                        "explicit": False}})
        self.make_jobs(h)
        self.make_ops(h)
        # Once every job has drained, a log topic deleted and created again
        # (Apache Kafka: the mock cannot delete a topic), its new log longer
        # than the old one in every partition: each job that counted one of
        # its records must stop (exit 4) and change nothing. A stream of its
        # own: every seed draws the operations it always drew.
        r_re = random.Random("%s:recreate" % self.seed)
        if self.kafka == "apache" and r_re.random() < (0.9 if self.focus == "recreate" else 0.3):
            h["recreate"] = r_re.choice([t["id"] for t in h["topics"]
                                         if t["kind"] == LOG and "case_of" not in t])
        return h

    def make_jobs(self, h):
        r = self.r
        logs = [t for t in h["topics"] if t["kind"] == LOG and "case_of" not in t]
        jobs = h["jobs"]

        def new_job(topics, db, kind, name=None):
            j = {"id": "j%d" % len(jobs), "topics": topics, "db": db["id"], "kind": kind,
                 "name": name, "start": "latest" if self.chance(0.3) else "earliest",
                 "offsets": "mysql", "share": "plain", "byte_cap": None, "table": None,
                 "max_keys": None}
            if kind == "count" and self.chance(0.2, "analytics"):
                j["table"] = "t_" + j["id"]     # run --table: a table of its own
            if kind == "count" and db["mode"] == "idempotent" and self.r_collide.random() < (
                    0.6 if self.focus == "table-collisions" else 0.05 if j["table"] is None
                    else 0.25):
                # A view named like another job's NAME_topic.
                j["table"] = (j["table"] or "t_" + j["id"]) + "_topic"
            if kind == "count" and self.r_dead.random() < (
                    0.8 if self.focus == "dead-letters" else 0.3):
                # Malformed lines kept: a table of the job's, or one the
                # database's jobs (and replays) share, a set of lines.
                j["dead_letters"] = self.r_dead.choice(["dl", "dl_" + j["id"]])
            if kind == "count" and db["format"].get("by") and self.chance(0.4, "analytics"):
                # Keys past the bound go to (other): exact per bucket only.
                j["max_keys"] = r.choice([1, 2, 5])
            if self.on("member-overflow") and self.chance(0.2, "member-overflow"):
                j["name"] = "long"
            idem = db["mode"] == "idempotent"
            if self.focus == "idempotent-rewind-off-grid" and idem:
                j["start"] = "latest"
            if kind == "count" and idem and len(topics) == 1 and self.chance(0.3, "idempotent-kafka-latest"):
                j["offsets"] = "kafka"
                if not self.on("idempotent-kafka-latest"):
                    j["start"] = "earliest"
                elif self.focus == "idempotent-kafka-latest":
                    j["start"] = "latest"
            if len(topics) == 1 and j["offsets"] == "mysql":
                s = r.random()
                if kind == LEDGER:
                    if self.on("ledger-two-writers") and self.chance(0.5, "ledger-two-writers"):
                        j["share"] = "partitions"
                elif s < 0.3:
                    j["share"] = "partitions"
                elif s < (0.6 if self.focus == "pipeline" else 0.45) and j["start"] == "earliest":
                    j["share"] = "group"
            if kind == "count":
                if not idem and self.chance(0.4):
                    j["byte_cap"] = r.choice([1024, 4096, 65536])
                elif idem and self.on("idempotent-byte-cap-livelock") and self.chance(
                        0.4, "idempotent-byte-cap-livelock"):
                    j["byte_cap"] = r.choice([1024, 2048])
            jobs.append(j)
            return j

        dbs = h["dbs"]
        if len(logs) == 2 and self.chance(0.25):
            new_job(["t0", "t1"], r.choice(dbs), "count", name="multi")
        else:
            for t in logs:
                new_job([t["id"]], r.choice(dbs), "count",
                        name=r.choice([None, None, "named"]))
        # Sometimes the same topic again, counted into another database.
        if len(dbs) > 1 and self.chance(0.3):
            t = r.choice(logs)["id"]
            used = {j["db"] for j in jobs if t in j["topics"]}
            free = [d for d in dbs if d["id"] not in used]
            if free:
                new_job([t], r.choice(free), "count", name="named")
        for t in h["topics"]:
            if "case_of" in t:
                # Into the database of the job on the other-case topic, under
                # that job's name in the other case: only case tells them apart.
                twin = next(j for j in jobs if t["case_of"] in j["topics"])
                j = new_job([t["id"]], next(d for d in dbs if d["id"] == twin["db"]), "count")
                j["name"] = "case_of:" + twin["id"]
            if t["kind"] == LEDGER:
                tdbs = [d for d in dbs if d["mode"] == "transactional"]
                new_job([t["id"]], r.choice(tdbs), LEDGER)
                if self.on("ledger-two-writers") and self.chance(0.3, "ledger-two-writers"):
                    # A second ledger job on the same accounts: another writer.
                    h["topics"].append({"id": "l1", "kind": LEDGER, "partitions": r.randint(2, 4),
                                        "keyed": False, "accounts_of": t["id"]})
                    t["keyed"] = False
                    new_job(["l1"], r.choice(tdbs), LEDGER)
                    jobs[-1]["db"] = jobs[-2]["db"]
                    break

    # ------------------------------------------------------------------
    def make_ops(self, h):
        r = self.r
        topics = {t["id"]: t for t in h["topics"]}
        dbs = {d["id"]: d for d in h["dbs"]}
        jobs = {j["id"]: j for j in h["jobs"]}
        live = {j: [] for j in jobs}        # job -> live instance ids
        started = set()                     # jobs started at least once
        produced = {t: [0] * topics[t]["partitions"] for t in topics}
        replays = []                        # earlier replay ops, to repeat
        n_inst = 0
        ops = h["ops"]

        def job_db_live(db):
            return any(live[j] for j in jobs if jobs[j]["db"] == db)

        def max_live(j):
            job = jobs[j]
            if job["offsets"] == "kafka":
                return 1
            if job["kind"] == LEDGER:
                return 2 if self.on("ledger-two-writers") and job["share"] == "partitions" else 1
            return 3 if job["share"] == "group" else 2

        # A few lines first, so that the first instances have work.
        for t in topics:
            if self.chance(0.7):
                ops.append(self.produce(t, topics[t], produced))
        steps = r.randint(*self.n_ops)
        kinds = ["produce", "start", "wait", "kill9", "term", "mysql", "broker", "replay",
                 "rewind", "audit", "status", "initdb", "invalid", "reset", "forget"]
        weights = [16, 16, 14, 8, 5, 4, 6, 8, 4, 3, 2, 2, 7, 6, 2]
        # Focusing on a known-open entry: more of the operations it needs.
        boost = {"identity-change": "invalid", "two-jobs-one-table": "invalid",
                 "exactness-overrides": "invalid", "replay-job-live": "replay",
                 "replay-key-spelling": "replay", "idempotent-rewind-off-grid": "rewind",
                 "audit-live": "audit", "ledger-two-writers": "start",
                 "table-collisions": "start", "replay-time": "replay",
                 "reset-replay": "replay"}.get(self.focus)
        if boost:
            weights[kinds.index(boost)] = 25
        if self.focus == "transactions":
            weights[kinds.index("produce")] = 30
        if self.focus == "pipeline":
            # Batches read while the one before commits, and what may
            # happen to the one committing: a second writer (fences), a
            # rebalance (members come and go), MySQL going away, kill -9.
            for k, w in (("start", 25), ("mysql", 10), ("kill9", 12), ("term", 8)):
                weights[kinds.index(k)] = w
        if self.mysql == "galera":
            # What the target is for: a node fault in most histories.
            weights[kinds.index("mysql")] = 14 if self.focus == "failover" else 9
        if self.focus == "foreign-server":
            # Outages of the jobs' own server, while they run, send them
            # to the unrelated one.
            weights[kinds.index("mysql")] = 14
        if self.focus in ("manage-jobs", "recount", "fold-skips"):
            # `scripts/soak --focus manage-jobs`: resets and forgets often.
            weights[kinds.index("reset")], weights[kinds.index("forget")] = 25, 8
        if self.focus == "reset-replay":
            # Replays, then resets of their jobs.
            weights[kinds.index("reset")] = 20
        while len(ops) < steps:
            if self.sighup(ops, live) or self.collide(ops, topics, dbs, jobs, started):
                continue
            kind = r.choices(kinds, weights=weights)[0]
            if self.open_txn is not None and (
                    kind not in ("produce", "start", "wait", "kill9", "term")
                    or self.r_apache.random() < 0.25):
                # A transaction left open across a few operations ends
                # before anything the oracle cannot model under it (a
                # broker fault, an operator command, a first start at the
                # log's end: where a read_committed reader stops is then
                # the last stable offset, not the high watermark).
                ops.append(self.txn_end())
                continue
            if kind == "start" and self.open_txn is not None:
                cand = [j for j in jobs if len(live[j]) < max_live(j)
                        and jobs[j]["start"] == "earliest"]
                if not cand:
                    continue
            if kind == "produce":
                t = r.choice(list(topics))
                ops.append(self.produce(t, topics[t], produced))
            elif kind == "start":
                cand = [j for j in jobs if len(live[j]) < max_live(j)
                        and (self.open_txn is None or jobs[j]["start"] == "earliest")]
                if self.focus == "ledger-two-writers" and r.random() < 0.8:
                    cand = [j for j in cand if jobs[j]["kind"] == LEDGER] or cand
                if not cand:
                    continue
                j = r.choice(cand)
                n_inst += 1
                inst = "%s#%d" % (j, n_inst)
                ops.append(self.start(jobs[j], inst, topics))
                live[j].append(inst)
                started.add(j)
                if self.focus == "pipeline" and len(live[j]) < max_live(j) \
                        and jobs[j]["share"] != "partitions":
                    # A second writer at once, over the same backlog: one
                    # fences the other while each reads ahead.
                    n_inst += 1
                    inst = "%s#%d" % (j, n_inst)
                    ops.append(self.start(jobs[j], inst, topics))
                    live[j].append(inst)
            elif kind == "wait":
                ops.append({"op": "wait", "ms": r.choice([100, 300, 700, 1500, 2500])})
            elif kind in ("kill9", "term"):
                cand = [(j, i) for j in live for i in live[j]]
                if not cand:
                    continue
                j, i = r.choice(cand)
                live[j].remove(i)
                ops.append({"op": kind, "inst": i})
            elif kind == "mysql":
                if self.chance(0.5):
                    ops.append({"op": "mysql_restart"})
                else:
                    ops.append({"op": "mysql_outage", "ms": r.choice([500, 1500, 3000])})
                if self.mysql == "galera":
                    ops[-1] = self.galera_fault()
                elif self.focus == "foreign-server":
                    # Long enough that live instances reconnect during it,
                    # and meet the unrelated server of their hosts list.
                    ops[-1] = {"op": "mysql_outage",
                               "ms": self.r_foreign.choice([4000, 6000, 8000])}
            elif kind == "broker":
                s = r.random()
                if s < 0.4:
                    ops.append({"op": "broker_outage", "broker": r.choice([-1, 1, 2, 3]),
                                "ms": r.choice([300, 1000, 2500])})
                elif s < 0.8:
                    api, err = r.choice([("Fetch", "NOT_LEADER_FOR_PARTITION"),
                                         ("Fetch", "REQUEST_TIMED_OUT"),
                                         ("ListOffsets", "LEADER_NOT_AVAILABLE"),
                                         ("ListOffsets", "REQUEST_TIMED_OUT")])
                    ops.append({"op": "broker_errors", "api": api, "count": r.randint(1, 6),
                                "err": err})
                else:
                    t = r.choice(list(topics))
                    ops.append({"op": "leader", "topic": t,
                                "partition": r.randrange(topics[t]["partitions"]),
                                "broker": r.randint(1, 3)})
                if self.kafka == "apache":
                    # No injected protocol errors on a real broker: its
                    # processes die and stop instead.
                    ra = self.r_apache
                    if ra.random() < 0.5:
                        ops[-1] = {"op": "broker_kill", "broker": ra.randint(1, 3),
                                   "ms": ra.choice([300, 1500, 4000])}
                    else:
                        ops[-1] = {"op": "broker_pause", "broker": ra.randint(1, 3),
                                   "ms": ra.choice([500, 2000, 8000])}
            elif kind == "replay":
                op = self.replay(h, topics, dbs, jobs, produced, replays, started)
                if op:
                    ops.append(op)
                    replays.append(op)
            elif kind == "rewind":
                cand = [j for j in started if dbs[jobs[j]["db"]]["mode"] == "idempotent"
                        and jobs[j]["offsets"] == "mysql"]
                if not cand:
                    continue
                j = r.choice(cand)
                t = r.choice(jobs[j]["topics"])
                floor = "zero"
                if jobs[j]["start"] == "latest" and not self.on("idempotent-rewind-off-grid"):
                    floor = "start"
                ops.append({"op": "rewind", "job": j, "topic": t,
                            "partition": r.randrange(topics[t]["partitions"]),
                            "frac": r.choice([0.0, 0.0, 0.3, 0.5, 0.9]), "floor": floor})
            elif kind == "audit":
                d = r.choice(list(dbs))
                if job_db_live(d) and not self.on("audit-live"):
                    continue
                op = {"op": "audit", "db": d}
                if self.focus == "audit-live" and job_db_live(d):
                    # A commit must land between two of audit's reads:
                    # audit again and again while the job runs.
                    op["repeat"] = 25
                ops.append(op)
            elif kind == "status":
                cand = [j for j in jobs if len(jobs[j]["topics"]) == 1]
                if cand:
                    ops.append({"op": "status", "job": r.choice(cand)})
            elif kind == "initdb":
                ops.append({"op": "initdb", "db": r.choice(list(dbs))})
            elif kind == "invalid":
                op = self.invalid(h, topics, dbs, jobs, started, live)
                if op:
                    ops.append(op)
            prefer = None
            if kind in ("reset", "forget") and self.focus in ("manage-jobs", "recount", "fold-skips") \
                    and self.chance(0.5):
                # A job that ran long enough to commit, then stopped or
                # still running: most moves then apply, rather than being
                # refused for a job that is none yet.
                prefer = r.choice(sorted(jobs))
                if not live[prefer]:
                    n_inst += 1
                    inst = "%s#%d" % (prefer, n_inst)
                    ops.append(self.start(jobs[prefer], inst, topics))
                    live[prefer].append(inst)
                    started.add(prefer)
                    ops.append({"op": "wait", "ms": 1500})
                    if self.chance(0.5):
                        ops.append({"op": "term", "inst": inst})
                        live[prefer].remove(inst)
                else:
                    ops.append({"op": "wait", "ms": 700})
            if kind == "reset":
                if replays and self.r_time.random() < (
                        0.6 if self.focus == "reset-replay" else 0.2):
                    op = self.reset_replay(replays)
                else:
                    op = self.reset(topics, dbs, jobs, started, live, prefer)
                recountable = op and op["op"] == "reset" and op["to"] == "recount" \
                    and op.get("job") in jobs \
                    and jobs[op["job"]]["kind"] == "count" and not jobs[op["job"]].get("max_keys") \
                    and dbs[jobs[op["job"]]["db"]]["mode"] == "transactional" \
                    and jobs[op["job"]]["start"] == "earliest"
                if recountable and self.r_time.random() < (
                        0.9 if self.focus == "fold-skips" else 0.6 if self.focus == "recount"
                        else 0.15):
                    # Across a skip: the job moved past new records, counts
                    # more, and is recounted from before the skip (which
                    # stays skipped).
                    t = op["topic"]
                    # Stopped first, so that the records the reset skips
                    # are not counted before it.
                    for inst in list(live[op["job"]]):
                        ops.append({"op": "term", "inst": inst})
                        live[op["job"]].remove(inst)
                    # (Drawn from the time stream: the main one draws on as
                    # it did, so earlier seeds keep their histories.)
                    main, self.r = self.r, self.r_time
                    ops.append(self.produce(t, topics[t], produced))
                    ops.append({"op": "reset", "job": op["job"], "to": "latest", "topic": t,
                                "partition": 0, "frac": 0.0, "pick": 0.0, "dry": False})
                    ops.append(self.produce(t, topics[t], produced))
                    j = op["job"]
                    if not live[j] and jobs[j]["kind"] == "count":
                        # An instance that folds the audit rows older than
                        # a second, the skip's among them, before it counts
                        # (--audit-keep folds at its first turn): around
                        # the skip, never across it.
                        n_inst += 1
                        inst = "%s#%d" % (j, n_inst)
                        st = self.start(jobs[j], inst, topics)
                        st["args"]["audit_keep"] = True
                        ops.append({"op": "wait", "ms": 1100})
                        ops.append(st)
                        live[j].append(inst)
                        started.add(j)
                    self.r = main
                    if live[j]:
                        ops.append({"op": "wait", "ms": 1500})
                    op["frac"] = 0.0
                if op:
                    ops.append(op)
            elif kind == "forget":
                # A count job with its offsets in MySQL (forget refuses one
                # whose consumer group holds offsets; a ledger's decided
                # transactions outlive it, which the oracle does not model).
                cand = [j for j in started if jobs[j]["kind"] == "count"
                        and jobs[j]["offsets"] == "mysql"]
                if not cand:
                    continue
                j = prefer if prefer in cand else r.choice(cand)
                op = {"op": "forget", "job": j, "dry": self.chance(0.2)}
                if not op["dry"]:
                    live[j] = []   # the runner stops them first, as ktally-forget(1) says
                ops.append(op)
        if self.open_txn is not None:
            ops.append(self.txn_end())
        if self.mysql == "galera" and self.mysql_down is not None:
            # A node still down when the jobs drain, sometimes: ktally,
            # given every node, must finish on the others.
            if self.r_galera.random() < (0.1 if self.focus == "failover" else 0.5):
                ops.append({"op": "mysql_node_restart", "node": self.mysql_down})
        if self.focus == "idempotent-byte-cap-livelock":
            # The drain restarts every job: new records after an open chunk
            # larger than the byte cap, read again from the chunk's start.
            for t in topics:
                if topics[t]["kind"] == LOG:
                    op = self.produce(t, topics[t], produced)
                    op["n"], op["spread"], op["sync"] = 400, "one", True
                    ops.append(op)
            # Records in message sets of their own, so that the byte cap
            # binds inside the open chunk (the mock hands one set a Fetch).
            for op in ops:
                if op["op"] == "produce":
                    op["sync"] = True

    def txn_end(self):
        """The transaction left open commits or aborts."""
        op = {"op": "txn_end", "topic": self.open_txn,
              "how": self.r_apache.choice(["commit", "abort"])}
        self.open_txn = None
        return op

    def galera_fault(self):
        """A Galera node killed -9 and left down (the first host, the one
        ktally writes to, half the time), killed for a while, or restarted;
        never two down at once (the other two keep the quorum)."""
        rg = self.r_galera
        if self.mysql_down is not None:
            op = {"op": "mysql_node_restart", "node": self.mysql_down}
            self.mysql_down = None
            return op
        node = 1 if rg.random() < (0.8 if self.focus == "failover" else 0.5) else rg.randint(2, 3)
        s = rg.random()
        if s < (0.8 if self.focus == "failover" else 0.5):
            self.mysql_down = node
            return {"op": "mysql_node_kill", "node": node}
        if s < 0.9:
            return {"op": "mysql_outage", "node": node, "ms": rg.choice([500, 1500, 3000])}
        return {"op": "mysql_restart", "node": node}

    def sighup(self, ops, live):
        """Sometimes a reload of a live instance: nothing may change in the
        results. One started with a --config file finds new limits in it."""
        rr = self.r_reload
        cand = [i for j in sorted(live) for i in live[j]]
        if not cand or rr.random() >= 0.07:
            return False
        ops.append({"op": "sighup", "inst": rr.choice(cand),
                    "interval": rr.choice([0, 0.1, 0.3, 0.5]),
                    "max_per_partition": rr.choice([None, 3, 25, 200, 5000])})
        return True

    def collide(self, ops, topics, dbs, jobs, started):
        """Sometimes a run that must be refused: its table collides
        with a started job's view or table, or is one of ktally's own; or
        its time format cannot place a line in time. Drawn from a stream
        of their own (older seeds keep their histories); often under
        --focus table-collisions or time-formats."""
        rc = self.r_collide
        focused = self.focus in ("table-collisions", "time-formats")
        if rc.random() >= (0.5 if focused else 0.05):
            return False
        logs = sorted(t for t in topics if topics[t]["kind"] == LOG)
        op = {"op": "invalid", "topic": rc.choice(logs), "db": rc.choice(sorted(dbs)),
              "mode": rc.choice(["transactional", "idempotent"])}
        if self.focus == "time-formats" or (self.focus != "table-collisions"
                                            and rc.random() < 0.4):
            op["kind"] = rc.choice(INVALID_TIME_FORMAT)
            op["format"] = rc.choice(NO_DATE_FORMATS if op["kind"] == "time-format-no-date"
                                     else NO_CONVERSION_FORMATS)
            op["config_check"] = rc.random() < 0.4
        else:
            holders = sorted(j for j in started if jobs[j]["kind"] == "count")
            if not holders and rc.random() < 0.8:
                return False
            if not holders or rc.random() < 0.2:
                op["kind"] = "own-table-name"
                op["table"] = rc.choice(["kafka_offset", "ktally_batches", "ktally_job",
                                         "ktally_coverage", "error_log_topic", "account_balance",
                                         "ktally_schema"])
            else:
                # What collides with the holder's tables in its database's mode.
                j = op["holder"] = rc.choice(holders)
                op["db"] = jobs[j]["db"]
                if dbs[op["db"]]["mode"] == "idempotent":
                    kinds = ["collide-view-as-table", "collide-topic-as-table",
                             "collide-view-is-table", "collide-foreign-view"]
                    if (jobs[j]["table"] or "").endswith("_topic"):
                        kinds += ["collide-topic-is-view"] * 3
                else:
                    kinds = ["collide-table-of-transactional", "collide-foreign-view"]
                op["kind"] = rc.choice(kinds)
        ops.append(op)
        return True

    # ------------------------------------------------------------------
    def produce(self, t, topic, produced):
        r = self.r
        n = r.choice([5, 20, 60, 150, 400])
        if self.focus == "pipeline":
            n *= 5  # a backlog: batches back to back, each read while one commits
        op = {"op": "produce", "topic": t, "n": n, "seed": r.randrange(1 << 30),
              "codec": r.choice(["none", "none", "gzip", "snappy", "lz4", "zstd"]),
              "spread": r.choice(["rr", "rr", "random", "one", "skew"]),
              "keys": r.choice(["none", "random", "fixed"])}
        if topic["kind"] == LOG and self.kafka == "apache":
            # A transactional producer that commits or aborts: only what
            # commits counts (read_committed).
            ra = self.r_apache
            op["txn"] = ra.choice(["commit", "abort", "abort"] if self.focus == "transactions"
                                  else [None, None, None, "commit", "abort"])
            if op["txn"] is None:
                del op["txn"]
            elif self.open_txn is None and ra.random() < (
                    0.4 if self.focus == "transactions" else 0.15):
                # Left open while instances read: the last stable offset
                # stays below the high watermark until it ends.
                op["txn"] = "open"
                self.open_txn = t
        if topic["kind"] == LOG:
            # Weights of the value shapes in this batch of messages.
            op["shapes"] = r.choice(["plain", "mixed", "mixed", "hostile", "multi"])
            op["iso"] = r.choice([0, 0, 10, 40])           # per cent of iso8601 lines
            op["iso_out_of_range"] = self.on("iso8601-out-of-range") and self.chance(
                0.3, "iso8601-out-of-range")
        else:
            op["accounts"] = r.choice([3, 10, 40])
            op["dups"] = r.choice([0, 50, 150])             # per mille
            op["bad"] = r.choice([0, 30, 100])
            if self.focus == "ledger-two-writers":
                # Many accounts, each new to both writers at about one time
                # (test 100's shape: thousands of messages, batches of 200).
                op["n"], op["accounts"], op["spread"] = 3000, 1000, "random"
        for p in range(topic["partitions"]):
            produced[t][p] += n // topic["partitions"]
        return op

    def start(self, job, inst, topics):
        r = self.r
        a = {"interval": r.choice([0, 0.1, 0.3, 0.5]),
             "max_per_partition": r.choice([None, None, 3, 25, 200, 5000]),
             "log_format": self.r_log.choice([None, "text", "json", "logfmt"])}
        # The interval and the cap in a --config file (which a SIGHUP reads
        # again); /readyz's bound, which must change nothing but /readyz.
        a["config"] = self.r_reload.random() < 0.3
        # The job's settings spelled another way (--levels repeated or
        # reordered, the default --time-format written out or as %F %T):
        # the same job, never refused as a change.
        if self.r_spell.random() < 0.3:
            a["respell"] = self.r_spell.choice(["levels", "time", "both"])
        if self.r_reload.random() < 0.2:
            a["health_max_lag"] = self.r_reload.choice([0, 10, 100000])
        # What systemd and a prober see: /readyz's commit age and
        # /livez's stall bound (each with --http), and a NOTIFY_SOCKET
        # listener that holds the notifications to their order.
        if self.r_health.random() < 0.2:
            a["health_max_commit_age"] = self.r_health.choice([1, 30, 3600])
        if self.r_health.random() < 0.2:
            a["health_max_stall"] = self.r_health.choice([15, 60, 600])
        if self.r_health.random() < 0.3:
            a["notify"] = True
        # --audit-keep 1s: the audit rows fold between batches, around
        # skips (a recount must still see them).
        if self.r_fold.random() < (0.5 if self.focus in ("recount", "fold-skips") else 0.2):
            a["audit_keep"] = True
        # Settings given as a container gives them: KTALLY_ variables,
        # every one or some (the others flags, over decoys in the
        # environment that they must win over).
        if self.r_env.random() < 0.3:
            a["env"] = self.r_env.choice(["all", "some"])
            a["env_seed"] = self.r_env.randrange(1 << 30)
        # The records on stdout, as in the container image (the harness
        # reads both streams as one log).
        if self.r_env.random() < 0.3:
            a["log_to"] = "stdout"
        if self.focus == "pipeline":
            # Back to back, in small batches, so that each is read while
            # the one before commits; a log the checker reads (ahead_of).
            a["interval"], a["max_per_partition"] = 0, r.choice([10, 25, 200])
            a["log_format"] = r.choice(["json", "logfmt"])
        if job["kind"] == LEDGER:
            a["workers"] = r.choice([1, 2, 4])
            if self.focus == "ledger-two-writers":
                a["interval"], a["max_per_partition"] = 0, r.choice([5, 25, 200])
        if job["share"] == "partitions":
            n = topics[job["topics"][0]]["partitions"]
            if self.focus == "ledger-two-writers" and job["kind"] == LEDGER and n > 1:
                # Disjoint halves, in turn: the writers share accounts but not
                # partitions, so neither fences the other out of a batch.
                halves = self.__dict__.setdefault("halves", {})
                half = halves.get(job["id"], 0)
                halves[job["id"]] = 1 - half
                lo, hi = (0, n // 2 - 1) if half == 0 else (n // 2, n - 1)
            else:
                lo = r.randrange(n)
                hi = r.randrange(lo, n)
            a["partitions"] = "%d-%d" % (lo, hi) if hi > lo else "%d" % lo
        return {"op": "start", "job": job["id"], "inst": inst, "args": a}

    def replay_range(self, t, topics, produced):
        r = self.r
        n = topics[t]["partitions"]
        parts = sorted(r.sample(range(n), r.randint(1, n)))
        ranges = []
        for p in parts:
            a = r.randint(0, max(0, produced[t][p]))
            b = r.randint(a, max(a, produced[t][p]))
            ranges.append([p, a, b])
        return ranges

    def replay(self, h, topics, dbs, jobs, produced, replays, started):
        r = self.r
        logs = [t for t in topics if topics[t]["kind"] == LOG]
        timed = [o for o in replays if o.get("by_time") and o["by_time"]["from"] != "last"]
        if timed and self.r_time.random() < (0.5 if self.focus == "replay-time" else 0.25):
            # A replay by time again, usually once more has been produced:
            # the range its first run stored, nothing counted twice.
            op = dict(self.r_time.choice(timed))
            op["kill_after_ms"] = self.r_time.choice([None, None, 30])
            return op
        spelled = self.on("replay-key-spelling")
        if replays and self.chance(0.35, "replay-key-spelling"):
            # The same replay again: it must change nothing.
            op = dict(r.choice(replays))
            op["spelling"] = r.choice(["shuffled", "zeros"]) if spelled else "canonical"
            op["kill_after_ms"] = None
            return op
        named = [o for o in replays if (o.get("job") or "").startswith("live:")]
        if self.focus == "replay-job-live" and named and r.random() < 0.5:
            # A named replay run again with another range: refused (its
            # range is part of its job), never resumed from the first's.
            op = dict(r.choice(named))
            op["ranges"] = self.replay_range(op["topic"], topics, produced)
            op["kill_after_ms"] = None
            return op
        t = r.choice(logs)
        ranges = self.replay_range(t, topics, produced)
        d = r.choice(list(dbs))
        tables = ["rp_a", "rp_b"]
        if spelled and self.chance(0.3, "replay-key-spelling"):
            # Two names sharing their first 40 characters.
            tables = ["rp_" + "x" * 40 + "_a", "rp_" + "x" * 40 + "_b"]
        if dbs[d]["mode"] == "transactional":
            tables.append("error_log")
        op = {"op": "replay", "topic": t, "db": d, "table": r.choice(tables),
              "ranges": ranges, "spelling": "canonical",
              "kill_after_ms": r.choice([None, None, 30, 120, 300]),
              "max_per_partition": r.choice([None, 5, 50]), "job": None}
        if self.chance(0.1):
            op["job"] = "own"
        if self.r_dead.random() < (0.6 if self.focus == "dead-letters" else 0.25):
            # Into the database's shared dead-letter table, where the
            # replay's lines already kept must stay once.
            op["dead_letters"] = "dl"
        if self.on("replay-job-live") and self.chance(0.3, "replay-job-live"):
            live_jobs = [j for j in started if jobs[j]["db"] == d and t in jobs[j]["topics"]
                         and jobs[j]["kind"] == "count" and jobs[j]["offsets"] == "mysql"]
            if live_jobs:
                op["job"] = "live:" + r.choice(live_jobs)
        rt = self.r_time
        if rt.random() < (0.7 if self.focus == "replay-time" else 0.25):
            # By time, with moments before 1970 (each partition's log start;
            # no offsets-for-times request, so the mock can run them): its
            # first run stores the range, and a rerun (the repeat above,
            # after more was produced) must take it. --last 30000d is a new
            # moment at every run.
            op["by_time"] = {"from": rt.choice(["1969-12-31T23:59:59.999Z", "1900-01-01T00:00:00Z",
                                                "1969-12-31T18:59:59-05:00", "last"]),
                             "until": rt.choice([None, None, "1969-12-31T23:59:59.999Z"])}
            if op["by_time"]["from"] in ("last", "1969-12-31T23:59:59.999Z"):
                op["by_time"]["until"] = None   # not after the first moment
            op["job"] = None
        return op

    def reset_replay(self, replays):
        """`ktally reset` of an earlier replay's job: it stays within the
        replay's range (a rebuild to its --from, latest and --shift-by
        stopped at its --until, an offset outside refused), and the replay
        run again after it counts its range once."""
        rt = self.r_time
        if not replays:
            return None
        return {"op": "reset_replay", "replay": dict(rt.choice(replays)),
                "to": rt.choice(["rebuild", "rebuild", "latest", "shift", "outside", "earliest",
                                 "recount", "before-1970"]),
                "pick": round(rt.random(), 3), "dry": rt.random() < 0.1}

    def reset(self, topics, dbs, jobs, started, live, prefer=None):
        """`ktally reset` of a started job. Every kind of move is drawn,
        those that must be refused too (a transactional or ledger job moved
        back, a shared table rebuilt); the runner checks each refusal's
        reason. A move forward of an idempotent job is drawn only while no
        instance of it runs: offsets a batch in flight counts anyway would
        make the plan's "never counted" an upper bound, not the oracle's
        exact holes. A job with its offsets in Kafka is not fenced: only
        while none runs either."""
        r = self.r
        if not started:
            return None
        j = prefer if prefer in started else r.choice(sorted(started))
        job = jobs[j]
        idem = dbs[job["db"]]["mode"] == "idempotent"
        quiet = not live[j]
        if job["offsets"] == "kafka":
            choices = ["earliest", "latest", "rebuild"] if quiet else []
        elif idem:
            choices = ["earliest", "back", "back"] + (["latest", "fwd", "batch", "rebuild"]
                                                      if quiet else [])
        elif job["kind"] == "count":
            # Transactional counts: forward is fenced and exact live; back,
            # earliest and batch are refused (or stay).
            choices = ["latest", "fwd", "fwd", "back", "earliest", "batch", "rebuild", "rebuild"]
        else:
            # A ledger moves forward; back and a rebuild are refused.
            choices = ["latest", "fwd", "fwd", "back", "rebuild"]
        if not choices:
            return None
        tx_count = job["kind"] == "count" and not idem
        if self.r_dead.random() < (0.8 if self.focus in ("recount", "fold-skips") else 0.3 if tx_count else 0.08):
            # A move back with --rebuild: a transactional count job takes
            # the range back and counts it again (ktally-reset(1),
            # RECOUNTING A RANGE); the others refuse it.
            t = self.r_dead.choice(job["topics"])
            op = {"op": "reset", "job": j, "to": "recount", "topic": t,
                  "partition": self.r_dead.randrange(topics[t]["partitions"]),
                  "frac": self.r_dead.choice([0.0, 0.3, 0.5, 0.9]), "pick": 0.0,
                  "dry": self.r_dead.random() < 0.15}
            if self.r_time.random() < 0.3:
                # By time, before 1970: every partition of the topic back to
                # its log start, less what a skip keeps skipped.
                op["by_time"] = self.r_time.choice(["1969-12-31T23:59:59.999Z", "30000d"])
            return op
        t = r.choice(job["topics"])
        op = {"op": "reset", "job": j, "to": r.choice(choices), "topic": t,
              "partition": r.randrange(topics[t]["partitions"]),
              "frac": r.choice([0.0, 0.3, 0.5, 0.9, 1.0]), "pick": round(r.random(), 3),
              "dry": self.chance(0.15)}
        if op["to"] == "earliest" and self.r_time.random() < 0.4:
            # A moment before 1970 is each log start, as --to earliest.
            op["to"] = "before-1970"
            op["moment"] = self.r_time.choice(["1969-12-31T23:59:59.999Z", "30000d",
                                               "1900-01-01T00:00Z"])
        return op

    def invalid(self, h, topics, dbs, jobs, started, live):
        r = self.r
        kinds = list(INVALID_RUN) + list(INVALID_REPLAY) + list(INVALID_INITDB) + list(INVALID_MANAGE)
        kinds += list(INVALID_ANALYTICS) * (6 if self.focus == "analytics" else 1)
        if self.on("exactness-overrides"):
            kinds += ["exactness-override"] * (12 if self.focus == "exactness-overrides" else 3)
        if self.on("identity-change") and started:
            kinds += ["identity-change"] * (12 if self.focus == "identity-change" else 4)
        if self.on("two-jobs-one-table") and started:
            kinds += ["second-job"] * (12 if self.focus == "two-jobs-one-table" else 3)
        k = r.choice(kinds)
        if self.r_input.random() < (0.6 if self.focus == "structured" else 0.1):
            k = self.r_input.choice(INVALID_INPUT)
        op = {"op": "invalid", "kind": k}
        logs = [t for t in topics if topics[t]["kind"] == LOG]
        op["topic"] = r.choice(logs)
        op["db"] = r.choice(list(dbs))
        if k == "identity-change":
            cand = [j for j in started if jobs[j]["offsets"] == "mysql"]
            if not cand:
                return None
            j = r.choice(cand)
            op["job"] = j
            choices = ["bucket", "levels", "time-format"]
            if jobs[j]["kind"] == "count" and dbs[jobs[j]["db"]]["mode"] == "transactional" \
                    and len(jobs[j]["topics"]) == 1:
                choices.append("kind")
            if jobs[j]["kind"] == "count":
                choices.append("by")
                if dbs[jobs[j]["db"]]["format"]["time"] == "default":
                    choices.append("sum")
            if jobs[j]["kind"] == LEDGER:
                choices = ["kind"]
            op["change"] = r.choice(choices)
        elif k == "second-job":
            cand = [j for j in started if jobs[j]["kind"] == "count" and jobs[j]["offsets"] == "mysql"]
            if not cand:
                return None
            op["holder"] = r.choice(cand)
        elif k == "exactness-override":
            op["prop"] = r.choice(["enable.auto.commit=true", "enable.auto.offset.store=true",
                                   "isolation.level=read_uncommitted",
                                   "enable.partition.eof=false", "auto.offset.reset=latest",
                                   "group.id=other"])
            op["mode"] = r.choice(["transactional", "idempotent"])
        if self.r_dbspell.random() < 0.12:
            # A config file's [mysql] whose TLS would be dropped: uri beside
            # ssl-mode, or --db on the command line over the file's keys.
            op["kind"] = k = self.r_dbspell.choice(["config-uri-with-keys",
                                                    "config-flag-drops-tls"])
        elif k in ("table-not-identifier", "replay-bad-table"):
            # A name of another shape, or past the 250 bytes of MariaDB's
            # file names (a CJK character takes 5): --table, or for a run
            # --dead-letters, or in idempotent mode the NAME_topic it implies.
            rn = self.r_names
            op["name"] = rn.choice(["t-1", "\u4e2d" * 51, "a b", "\u00e9" * 51])
            if k == "table-not-identifier":
                op["flag"] = rn.choice(["--table", "--dead-letters", "topic-suffix"])
                if op["flag"] == "topic-suffix":
                    op["name"] = "\u4e2d" * 49
        return op
