#!/usr/bin/python3
"""scripts/soak: ktally's randomized history checker.

Runs seeded random histories (produce, run instances, faults, operator
actions, invalid combinations) against the private services of
scripts/services, drains every job, and compares every table with an
oracle computed from the bytes produced. A failing history is shrunk and
printed as a shell script that replays it in one command.

  scripts/soak [--seed S] [--minutes N] [--histories N] [--build DIR]
               [--mutant NAME] [--check NAME|all]... [--focus NAME]
               [--replay FILE] [--shrink-seconds N] [--verbose]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gen import Gen  # noqa: E402
from known_open import KNOWN_OPEN  # noqa: E402
from run import Failure, HarnessError, Runner, Services, load_env  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))


def say(text):
    print(text, flush=True)


# ---------------------------------------------------------------------------
# Histories as text: one JSON header line, then one line per operation.

def history_text(h):
    head = {k: v for k, v in h.items() if k != "ops"}
    return "\n".join([json.dumps(head, sort_keys=True)]
                     + [json.dumps(op, sort_keys=True) for op in h["ops"]]) + "\n"


def parse_history(text):
    rows = [json.loads(l) for l in text.splitlines() if l.strip() and not l.startswith("#")]
    h = dict(rows[0])
    h["ops"] = rows[1:]
    return h


def script_text(h, failure, original_ops, build):
    lines = [
        "#!/bin/sh",
        "# ktally randomized history checker (tests/history): a failing history.",
        "# seed %s; %s" % (h["seed"], "shrunk from %d to %d operations" % (original_ops, len(h["ops"]))
                           if original_ops != len(h["ops"]) else "%d operations" % len(h["ops"])),
        "# the whole unshrunk history: scripts/soak%s%s --seed %s --histories 1%s%s" % (
            " --kafka " + h["kafka"] if h.get("kafka") else "",
            " --mysql " + h["mysql"] if h.get("mysql") else "", h["seed"], "".join(" --check %s" % c for c in sorted(set(KNOWN_OPEN) - set(h["open"]))),
            " --focus %s" % h["focus"] if h.get("focus") else ""),
        "# failure: %s" % failure.sig,
    ]
    for l in failure.detail.splitlines()[:12]:
        lines.append("#   %s" % l[:200])
    lines += [
        "# Replay in one command from the repository root: sh THIS_FILE",
        "# (KT_BUILD=build-asan for the sanitizer build; --verbose shows each step)",
        'exec scripts/soak --build "${KT_BUILD:-%s}"%s%s --replay - "$@" <<\'HISTORY\'' % (
            build, " --kafka " + h["kafka"] if h.get("kafka") else "",
            " --mysql " + h["mysql"] if h.get("mysql") else ""),
    ]
    return "\n".join(lines) + "\n" + history_text(h) + "HISTORY\n"


# ---------------------------------------------------------------------------

class Soak:
    def __init__(self, args):
        self.args = args
        self.build = os.path.relpath(os.path.abspath(args.build), REPO) \
            if os.path.abspath(args.build).startswith(REPO + "/") else os.path.abspath(args.build)
        env_file = os.environ.get("KT_SERVICES_ENV") or os.path.join(REPO, "build/services/env")
        if not os.path.exists(env_file):
            raise SystemExit("soak: no services env at %s: run scripts/services start" % env_file)
        self.svc = Services(load_env(env_file), os.path.abspath(args.build), REPO)
        # The histories draw what the services can do: transactional
        # producers and broker processes on Apache Kafka, nodes on Galera.
        for what, want, have in (("--kafka", args.kafka, self.svc.kafka),
                                 ("--mysql", args.mysql, self.svc.topology)):
            if want is not None and want != have:
                raise SystemExit("soak: %s %s, but the services of %s run %s (start them with "
                                 "scripts/services start %s %s in a state dir of their own)" % (
                                     what, want, env_file, have, what, want))
        if not os.access(self.svc.ktally, os.X_OK):
            raise SystemExit("soak: %s is missing: build first (meson compile -C %s)" % (
                self.svc.ktally, args.build))
        self.out = os.path.join(REPO, "build", "history")
        os.makedirs(self.out, exist_ok=True)
        self.slow = args.slow or (3.0 if self.sanitized() else 1.0)
        self.totals = {"histories": 0, "ops": 0, "kills": 0, "sigterms": 0, "sighups": 0,
                       "faults": 0, "refused": 0, "starts": 0, "records": 0, "rewinds": 0,
                       "resets": 0, "forgets": 0, "refused_tables": 0, "refused_formats": 0,
                       "errors_checked": 0, "keyed_tables": 0, "folded_tables": 0,
                       "folded_checked": 0, "folded_exact_buckets": 0, "notify_checked": 0,
                       "probes_checked": 0, "recounts": 0, "dead_letters_checked": 0,
                       "transactions": 0, "aborted": 0, "foreign_checked": 0,
                       "foreign_refusals": 0, "foreign_first": 0, "recreated_stopped": 0,
                       "time_replays": 0, "time_reruns": 0, "replay_resets": 0,
                       "recounts_kept_skip": 0, "batches_ahead": 0}
        self.failures = []

    def sanitized(self):
        try:
            opts = subprocess.run(["meson", "introspect", "--buildoptions", self.args.build],
                                  capture_output=True, timeout=30).stdout
            for o in json.loads(opts or b"[]"):
                if o["name"] == "b_sanitize" and o["value"] not in ("none", ""):
                    return True
        except Exception:
            pass
        return "asan" in self.args.build

    def open_set(self):
        checks = set(self.args.check or [])
        if "all" in checks:
            return set()
        unknown = checks - set(KNOWN_OPEN)
        if unknown:
            raise SystemExit("soak: --check: unknown %s (known: %s)" % (
                ", ".join(sorted(unknown)), ", ".join(sorted(KNOWN_OPEN))))
        return set(KNOWN_OPEN) - checks

    def attempt(self, h, tag):
        """Runs one history: None when it passed, else the Failure."""
        work = os.path.join(self.out, "work", tag)
        shutil.rmtree(work, ignore_errors=True)
        r = Runner(h, self.svc, work, budget=self.args.history_seconds * self.slow,
                   verbose=self.args.verbose, slow=self.slow)
        try:
            stats = r.run()
        except Failure as f:
            f.work = work
            f.runner = r
            with open(os.path.join(work, "steps.txt"), "w") as fh:
                fh.write("\n".join(r.log_lines) + "\n")
            return f
        finally:
            pass
        r.drop_databases()
        shutil.rmtree(work, ignore_errors=True)
        self.last_stats = stats
        return None

    def run_one(self, h):
        tag = "s%s" % h["seed"]
        t0 = time.monotonic()
        self.last_stats = {}
        try:
            f = self.attempt(h, tag)
        except HarnessError as e:
            say("history %s: the checker could not run it (not a verdict on ktally): %s" % (
                h["seed"], e))
            self.harness_errors = getattr(self, "harness_errors", 0) + 1
            return
        self.totals["histories"] += 1
        if f is None:
            for k in self.totals:
                if k != "histories":
                    self.totals[k] += self.last_stats.get(k, 0)
            say("history %s: ok, %d ops, %d instances, %d kills, %d faults, %d refusals, %.1f s" % (
                h["seed"], self.last_stats.get("ops", 0), self.last_stats.get("starts", 0),
                self.last_stats.get("kills", 0), self.last_stats.get("faults", 0),
                self.last_stats.get("refused", 0), time.monotonic() - t0))
            return
        self.totals["ops"] += len(h["ops"])
        say("history %s: FAILED after %.1f s: %s" % (h["seed"], time.monotonic() - t0, f.sig))
        for l in f.detail.splitlines()[:20]:
            say("    " + l[:300])
        say("    steps and logs: %s" % f.work)
        shrunk = self.shrink(h, f) if not self.args.no_shrink else h
        text = script_text(shrunk, f, len(h["ops"]), self.build)
        checks = sorted(set(KNOWN_OPEN) - set(h["open"]))
        path = os.path.join(self.out, "fail-%s%s.sh" % (
            h["seed"], "-" + "-".join(checks) if 0 < len(checks) < 3 else ""))
        with open(path, "w") as fh:
            fh.write(text)
        os.chmod(path, 0o755)
        self.failures.append((h["seed"], f.sig, path))
        say("---- replay script (%s) ----\n%s---- end ----" % (os.path.relpath(path, REPO), text))

    def shrink(self, h, f):
        from shrink import shrink
        budget = self.args.shrink_seconds
        if budget <= 0:
            return h
        say("    shrinking (up to %d s)..." % budget)
        n = [0]

        def still_fails(cand):
            n[0] += 1
            try:
                g = self.attempt(cand, "s%s-shrink" % h["seed"])
            except Exception as e:  # a candidate the checker cannot run is not taken
                say("    (candidate not run: %s)" % e)
                return False
            return g is not None and g.sig == f.sig

        small = shrink(h, still_fails, budget)
        say("    shrunk from %d to %d operations in %d runs" % (len(h["ops"]), len(small["ops"]), n[0]))
        return small

    def main(self):
        a = self.args
        if a.replay:
            text = sys.stdin.read() if a.replay == "-" else open(a.replay).read()
            h = parse_history(text)
            for what, want, have in (("--kafka", h.get("kafka", "mock"), self.svc.kafka),
                                     ("--mysql", h.get("mysql", "single"), self.svc.topology)):
                if want != have:
                    raise SystemExit("soak: this history ran with %s %s; the services run %s: "
                                     "scripts/soak %s %s --replay ..." % (what, want, have, what, want))
            self.run_one(h) if not a.no_shrink_replay else None
            return self.report()
        open_ = self.open_set()
        seed = a.seed if a.seed is not None else int(time.time()) % 1000000
        target = "".join([" --kafka %s" % self.svc.kafka if self.svc.kafka != "mock" else "",
                          " --mysql %s" % self.svc.topology if self.svc.topology != "single" else ""])
        say("soak: seed %d (rerun a history: scripts/soak%s --seed S --histories 1), build %s%s%s" % (
            seed, target, self.build, ", checking " + ",".join(sorted(set(KNOWN_OPEN) - open_))
            if open_ != set(KNOWN_OPEN) else "", ", focus " + a.focus if a.focus else ""))
        end = time.monotonic() + a.minutes * 60 if a.minutes else None
        k = 0
        while True:
            if a.histories is not None and k >= a.histories:
                break
            if end is not None and time.monotonic() >= end:
                break
            if a.stop_at_failure and self.failures:
                break
            h = Gen(seed + k, open_, focus=a.focus, kafka=self.svc.kafka,
                    mysql=self.svc.topology).history()
            self.run_one(h)
            k += 1
        return self.report()

    def report(self):
        t = self.totals
        say("soak: %d histories, %d operations, %d instances started, %d kill -9, %d SIGTERM, "
            "%d SIGHUP, %d service faults, %d rewinds, %d resets, %d forgets, %d refusals checked, "
            "%d records produced, %d ERROR lines checked, %d failures" % (
                t["histories"], t["ops"], t["starts"], t["kills"], t["sigterms"], t["sighups"],
                t["faults"], t["rewinds"], t["resets"], t["forgets"], t["refused"], t["records"],
                t["errors_checked"], len(self.failures)))
        if t["refused_tables"] or t["refused_formats"]:
            say("soak: of the refusals, %d runs over a table that collides with another job's or "
                "ktally's own, %d time formats that cannot place a line in time" % (
                    t["refused_tables"], t["refused_formats"]))
        if t["foreign_checked"]:
            say("soak: %d histories whose hosts lists name an unrelated server: nothing written "
                "there, %d refusals of it logged (%d jobs whose instance started there, its "
                "own server down at its first connection)" % (
                    t["foreign_checked"], t["foreign_refusals"], t["foreign_first"]))
        if t["transactions"]:
            say("soak: Apache Kafka: %d transactions produced, %d records of them aborted (never "
                "to be counted)" % (t["transactions"], t["aborted"]))
        if t["recreated_stopped"]:
            say("soak: %d jobs stopped (exit 4, nothing changed) by their topic deleted and "
                "created again past their offsets" % t["recreated_stopped"])
        if t["recounts"] or t["dead_letters_checked"]:
            say("soak: %d recounts (reset --rebuild of a range), %d malformed lines checked in "
                "dead-letter tables" % (t["recounts"], t["dead_letters_checked"]))
        if t["time_replays"] or t["replay_resets"] or t["recounts_kept_skip"]:
            say("soak: %d replays by time (%d of them run again on their stored range), %d "
                "resets of replays' jobs, %d recounts that kept a skip skipped"
                % (t["time_replays"], t["time_reruns"], t["replay_resets"],
                   t["recounts_kept_skip"]))
        if t["keyed_tables"]:
            say("soak: --by/--sum: %d tables checked per (bucket, key), %d of them with "
                "--max-keys (%d lines in (other) rows, %d buckets exact per key)" % (
                    t["keyed_tables"], t["folded_tables"], t["folded_checked"],
                    t["folded_exact_buckets"]))
        if t["notify_checked"] or t["probes_checked"]:
            say("soak: systemd's side: %d instances' notifications checked in order, %d times "
                "/livez and /readyz probed against their bounds" % (
                    t["notify_checked"], t["probes_checked"]))
        if t["batches_ahead"]:
            say("soak: the pipeline: %d batches read while the one before committed, each "
                "written only after it (json and logfmt logs)" % t["batches_ahead"])
        for seed, sig, path in self.failures:
            say("soak: FAILED seed %s: %s: replay with: sh %s" % (seed, sig, os.path.relpath(path, REPO)))
        if getattr(self, "harness_errors", 0):
            say("soak: %d histories could not be run by the checker" % self.harness_errors)
        say("history checker: %d passed, %d failed" % (t["histories"] - len(self.failures),
                                                       len(self.failures)))
        return 1 if self.failures else 0


def mutant(args):
    """Builds the source with tests/history/mutants/NAME.patch applied into
    build-mutants/NAME and soaks it: exit 0 when the checker catches it."""
    patch = os.path.join(HERE, "mutants", args.mutant + ".patch")
    if not os.path.exists(patch):
        names = sorted(f[:-6] for f in os.listdir(os.path.join(HERE, "mutants")) if f.endswith(".patch"))
        raise SystemExit("soak: no mutant %s (known: %s)" % (args.mutant, ", ".join(names)))
    head = {}
    for line in open(patch):
        if line.startswith("# ") and ":" in line:
            k, _, v = line[2:].partition(":")
            head[k.strip()] = v.strip()
        elif not line.startswith("#"):
            break
    scratch = os.path.join(REPO, "build-mutants", args.mutant)
    src = os.path.join(scratch, "src")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    files = subprocess.run(["git", "-C", REPO, "ls-files", "-z"], capture_output=True,
                           check=True).stdout.split(b"\0")
    for f in files:
        if f and os.path.exists(os.path.join(REPO, f.decode())):
            dst = os.path.join(src, f.decode())
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(REPO, f.decode()), dst)
    r = subprocess.run(["patch", "-p1", "--forward", "-s", "-i", patch], cwd=src)
    if r.returncode != 0:
        raise SystemExit("soak: mutant %s no longer applies to this source" % args.mutant)
    build = os.path.join(scratch, "build")
    if not os.path.exists(os.path.join(build, "build.ninja")):
        subprocess.run(["meson", "setup", build, src], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["meson", "compile", "-C", build, "src/ktally:executable"], check=True, stdout=subprocess.DEVNULL)
    args.build = build
    if not args.focus and head.get("focus"):
        args.focus = head["focus"]
    for word in (head.get("target") or "").split("--")[1:]:
        what, _, want = word.strip().partition(" ")
        setattr(args, what, getattr(args, what) or want.strip())
    finds = (head.get("finds") or "none").split()[0]
    finds = None if finds == "none" else finds
    if finds and finds in KNOWN_OPEN:
        args.check = list(set(args.check or []) | {finds})
    if finds and not args.focus:
        args.focus = finds
    if args.histories is None and not args.minutes:
        args.histories = 30
    args.stop_at_failure = True
    say("soak: mutant %s (%s), built in %s" % (args.mutant, head.get("what", "?"),
                                               os.path.relpath(build, REPO)))
    rc = Soak(args).main()
    if rc:
        say("soak: mutant %s caught" % args.mutant)
        return 0
    say("soak: mutant %s SURVIVED: the checker did not find it" % args.mutant)
    return 1


def main():
    p = argparse.ArgumentParser(prog="scripts/soak", description=__doc__.split("\n\n")[1])
    p.add_argument("--seed", type=int, help="first history's seed (history k: seed + k)")
    p.add_argument("--minutes", type=float, help="run histories until this much time is up")
    p.add_argument("--histories", type=int, help="run this many histories")
    p.add_argument("--build", default=os.path.join(REPO, "build"), help="build dir (default build)")
    p.add_argument("--mutant", help="soak a build with tests/history/mutants/NAME.patch applied; "
                   "exit 0 when caught")
    p.add_argument("--check", action="append", metavar="NAME",
                   help="hold ktally to known-open expectation NAME (known_open.py), or all")
    p.add_argument("--focus", metavar="NAME", help="draw NAME's combination often")
    p.add_argument("--replay", metavar="FILE", help="run the history in FILE (- for stdin)")
    p.add_argument("--shrink-seconds", type=int, default=600, help="shrinking budget per failure")
    p.add_argument("--no-shrink", action="store_true")
    p.add_argument("--history-seconds", type=int, default=240, help="bound of one history")
    p.add_argument("--stop-at-failure", action="store_true")
    p.add_argument("--slow", type=float, help="scale every bound (default: 3 under sanitizers)")
    p.add_argument("--kafka", choices=["mock", "apache"],
                   help="the broker the services run (scripts/soak starts them in "
                   "build/services-apache): apache draws transactional producers that commit "
                   "or abort, and brokers killed -9 and paused")
    p.add_argument("--mysql", choices=["single", "galera"],
                   help="the MariaDB the services run (build/services-galera): galera draws "
                   "nodes killed -9 and left down, killed for a while and restarted; ktally "
                   "is given every node in --db")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--list", action="store_true", help="list the known-open expectations")
    args = p.parse_args()
    args.no_shrink_replay = False
    if args.list:
        for k, v in sorted(KNOWN_OPEN.items()):
            say("%-30s %s" % (k, v))
        return 0
    if args.histories is None and args.minutes is None and not args.replay and not args.mutant:
        args.histories = 1
    import lines
    import records
    lines.selftest()
    records.selftest()
    if args.mutant:
        return mutant(args)
    return Soak(args).main()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception:
        traceback.print_exc()
        sys.exit(1)
