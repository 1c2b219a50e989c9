#!/usr/bin/python3
"""tests/docs-check.py - the docs against the code, where a machine can
compare them (meson test `docs`, suite unit):

- every option `ktally COMMAND --help` shows is in that command's man page,
  and every option with a config-file key in ktally.conf(5)'s KEYS;
- the commands `ktally --help` lists are README.md's table and ktally(1)'s
  COMMANDS, each with a page of its own that is installed;
- the exit codes of src/base/error.h are ktally(1)'s EXIT STATUS, and each of
  them is named in ktally-run(1) or the command pages that can return it.

Usage: docs-check.py KTALLY SOURCE_ROOT MAN_DIR (meson passes them)."""
import re
import subprocess
import sys

ktally, src, man = sys.argv[1:4]
failures = []


def fail(what):
    failures.append(what)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def help_of(*args):
    out = subprocess.run([ktally, *args, "--help"], capture_output=True, text=True, check=True)
    return out.stdout


def page_options(text):
    """The long options a page's OPTIONS (or KEYS) section documents."""
    return set(re.findall(r"\\fB\\-\\-([a-z0-9\\-]+)\\fR", text.replace("\\-", "-"))) | \
        set(re.findall(r"\\fB--([a-z0-9-]+)\\fR", text.replace("\\-", "-")))


commands = re.findall(r"^  ([a-z-]+) +\S", help_of(), re.M)
if len(commands) < 9:
    fail("ktally --help lists %d commands: %r" % (len(commands), commands))

conf = read("%s/ktally.conf.5" % man).replace("\\-", "-")
keys_section = conf[conf.index(".SH KEYS"):conf.index(".SH RELOAD")]
for command in commands:
    text = help_of(command)
    options = re.findall(r"^\s+(?:-\w, )?--([a-z0-9-]+)", text, re.M)
    options = [o for o in options if o != "help"]
    page = read("%s/ktally-%s.1" % (man, command)).replace("\\-", "-")
    if "@OPTIONS@" in page or "@SYNOPSIS@" in page:
        fail("ktally-%s(1) still holds a marker" % command)
    for o in options:
        if ("\\fB--%s\\fR" % o) not in page:
            fail("ktally %s --%s is in --help but not in ktally-%s(1)" % (command, o, command))
    # An option a config file may give is among the KEYS, as its key.
    for line in page.split(".TP\n"):
        m = re.match(r"(?:\\fB-\w\\fR, )?\\fB--([a-z0-9-]+)\\fR", line)
        if m and "Config file: [" in line:
            key = re.search(r"Config file: \[(\w+)\] ([a-z0-9-]+)", line)
            if key is None or ("\\fB%s\\fR" % key.group(2)) not in keys_section:
                fail("ktally %s --%s has a config key not in ktally.conf(5)" % (command, m.group(1)))

readme = read("%s/README.md" % src)
table = re.findall(r"^\| `([a-z-]+)` \|.*\| ktally-([a-z-]+)\(1\) \|$", readme, re.M)
if [c for c, _ in table] != commands or any(c != p for c, p in table):
    fail("README.md's command table %r is not ktally --help's %r" % (table, commands))
overview = read("%s/ktally.1" % man).replace("\\-", "-")
listed = re.findall(r"^\.BR ([a-z\\-]+) \"  \(ktally-", overview, re.M)
if [c.replace("\\", "") for c in listed] != commands:
    fail("ktally(1) COMMANDS %r is not ktally --help's %r" % (listed, commands))
build = read("%s/src/man/meson.build" % src)
for command in commands:
    if "'ktally-%s'" % command not in build:
        fail("src/man/meson.build does not make ktally-%s(1)" % command)

codes = {int(v): n for n, v in re.findall(r"KT_EXIT_(\w+) = (\d+)", read("%s/src/base/error.h" % src))}
status = overview[overview.index(".SH EXIT STATUS"):overview.index(".SH ENVIRONMENT")]
documented = sorted(int(c) for c in re.findall(r"^\.B (\d+)$", status, re.M))
if documented != sorted(codes):
    fail("ktally(1) EXIT STATUS documents %r, src/base/error.h has %r" % (documented, sorted(codes)))

for f in failures:
    print("FAIL: " + f)
print("docs-check: %d commands, %d exit codes; %d failures" % (len(commands), len(codes),
                                                                len(failures)))
sys.exit(1 if failures else 0)
