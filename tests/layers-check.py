#!/usr/bin/python3
"""tests/layers-check.py - the layers of src/ as built (meson test `layers`,
suite unit). src/README.md, Layout, says which layer may use which; this
holds the built code to it:

- symbols: every name an object file of one layer's static library uses
  from another of ktally's libraries is defined in a layer it may use (one
  below it), never above it or beside it (`nm`);
- no call cycle between object files: the graph "A uses a name B defines"
  over every object of every layer has no loop (two files that call each
  other are one concern in two files, or miss a hook or an interface);
- includes: every `#include "NAME"` of a layer's sources names a header of
  that layer or of one it may use, by its bare name (a path such as
  "../observe/metrics.h" would find the file beside the includer whatever
  the include path says), and the libraries' headers (<mysql.h>,
  <librdkafka/rdkafka.h>, <pcre2.h>, <microhttpd.h>) only in their layer;
- one face for the store: outside store/, no MySQL name in the code (an
  identifier mysql_* or MYSQL*, outside strings and comments) and no
  kt_db_connection(): the store's typed functions and KtDb only;
- include paths: each layer's sources are compiled with exactly the
  folders of the layers it may use (compile_commands.json), so the two
  cannot drift apart.

Usage: layers-check.py SOURCE_ROOT BUILD_ROOT LAYER:LIB:USES... where USES
is a comma-separated list of the layers LAYER uses directly (meson passes
them from the same lists the libraries are built with).
`layers-check.py --report ...` prints the figures (the symbols between
layers, the cycles) and exits 0 whatever they are."""
import json
import os
import re
import subprocess
import sys

report_only = sys.argv[1:2] == ["--report"]
args = sys.argv[2:] if report_only else sys.argv[1:]
src, build = args[0], args[1]
layers = {}  # name -> (library path, [direct uses])
for spec in args[2:]:
    name, lib, uses = spec.split(":")
    layers[name] = (lib, [u for u in uses.split(",") if u])

failures = []


def fail(what):
    failures.append(what)


def below(name):
    """Every layer NAME may use: its direct uses, and theirs."""
    seen, todo = set(), list(layers[name][1])
    while todo:
        u = todo.pop()
        if u not in seen:
            seen.add(u)
            todo.extend(layers[u][1])
    return seen


allowed = {name: below(name) for name in layers}

# Which library headers belong to which layer: the only one that may
# include them.
OWN_HEADERS = {
    "mysql.h": "store", "mysqld_error.h": "store", "errmsg.h": "store",
    "librdkafka/rdkafka.h": "kafka",
    "pcre2.h": "stages",
    "microhttpd.h": "observe",
}


# --- symbols -----------------------------------------------------------------

def objects(layer, lib):
    """{object: (defined names, used names)} of one static library."""
    out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True, check=True).stdout
    objs = {}
    for line in out.splitlines():
        # lib.a:member.o:VALUE TYPE NAME (VALUE blank for U)
        m = re.match(r"^[^:]*:([^:]*):\s*(?:[0-9a-f]+)?\s+(\S)\s+(\S+)$", line)
        if not m:
            continue
        member, kind, sym = m.groups()
        # Thin archives name their members by path.
        member = os.path.basename(member)
        obj = layer + "/" + re.sub(r"\.c\.o$", "", re.sub(r"^" + layer + "_", "", member))
        d, u = objs.setdefault(obj, (set(), set()))
        if kind == "U":
            u.add(sym)
        elif kind in "TDBRVWGS" and kind.isupper():
            d.add(sym)
    return objs


objs = {}
for name, (lib, _) in layers.items():
    objs.update(objects(name, lib))
definer = {}
for obj, (defs, _) in objs.items():
    for sym in defs:
        definer[sym] = obj

edges = {}  # obj -> {obj: [names]}
between = {}  # (layer, layer) -> number of names used
for obj, (_, used) in objs.items():
    layer = obj.split("/")[0]
    for sym in sorted(used):
        other = definer.get(sym)
        if other is None or other == obj:
            continue
        edges.setdefault(obj, {}).setdefault(other, []).append(sym)
        olayer = other.split("/")[0]
        if olayer != layer:
            between[(layer, olayer)] = between.get((layer, olayer), 0) + 1
            if olayer not in allowed[layer]:
                fail("%s uses %s from %s: %s may use only %s" % (
                    obj, sym, other, layer, ", ".join(sorted(allowed[layer])) or "GLib"))


def cycles():
    """The strongly connected components of more than one object (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(objs):
        if v not in index:
            visit(v)
    return out


found = cycles()
for comp in found:
    ties = []
    for a in comp:
        for b in comp:
            if b in edges.get(a, {}):
                names = edges[a][b]
                ties.append("%s -> %s (%s%s)" % (a, b, ", ".join(names[:3]),
                                                 ", ..." if len(names) > 3 else ""))
    fail("a call cycle between %d object files: %s" % (len(comp), "; ".join(ties)))


# --- includes ------------------------------------------------------------------

def headers_of(layer):
    names = set(f for f in os.listdir(os.path.join(src, "src", layer)) if f.endswith(".h"))
    # Headers generated from a template in the layer's folder (NAME.h.in).
    names |= set(f[:-3] for f in os.listdir(os.path.join(src, "src", layer)) if f.endswith(".h.in"))
    return names


owned = {layer: headers_of(layer) for layer in layers}
for layer in layers:
    folder = os.path.join(src, "src", layer)
    for f in sorted(os.listdir(folder)):
        if not f.endswith((".c", ".h")):
            continue
        path = "src/%s/%s" % (layer, f)
        for number, line in enumerate(open(os.path.join(folder, f), encoding="utf-8"), 1):
            m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
            if not m:
                continue
            quote, name = m.groups()
            where = "%s:%d: #include %s" % (path, number, m.group(0).split("include", 1)[1].strip())
            if quote == '"':
                if "/" in name:
                    fail(where + ": a header is named by its bare name (a path finds "
                         "the file whatever the layer may see)")
                    continue
                homes = [l for l in layers if name in owned[l]]
                if not homes:
                    fail(where + ": no layer has that header")
                elif not any(h == layer or h in allowed[layer] for h in homes):
                    fail(where + ": a header of %s, which %s may not use" % (homes[0], layer))
            else:
                home = OWN_HEADERS.get(name)
                if home is not None and home != layer and home in layers:
                    fail(where + ": only %s speaks that library" % home)


# --- the store's face ----------------------------------------------------------

def code_only(text):
    """@text without its comments and string and character literals."""
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  lambda m: "\n" * m.group(0).count("\n") if m.group(0)[0] == "/" else '""',
                  text, flags=re.S)


for layer in layers:
    if layer == "store":
        continue
    folder = os.path.join(src, "src", layer)
    for f in sorted(os.listdir(folder)):
        if not f.endswith((".c", ".h")):
            continue
        code = code_only(open(os.path.join(folder, f), encoding="utf-8").read())
        for number, line in enumerate(code.split("\n"), 1):
            for name in re.findall(r"\b(?:mysql_\w*|MYSQL\w*|kt_db_connection)\b", line):
                fail("src/%s/%s:%d: %s: outside the store, MySQL is the store's typed "
                     "functions and KtDb (db.h, db-rows.h)" % (layer, f, number, name))


# --- include paths -------------------------------------------------------------

commands = os.path.join(build, "compile_commands.json")
if os.path.exists(commands):
    seen = set()
    for entry in json.load(open(commands)):
        rel = os.path.relpath(os.path.join(entry["directory"], entry["file"]),
                              os.path.join(src, "src"))
        layer = rel.split(os.sep)[0]
        if layer not in layers or rel.count(os.sep) != 1 or layer in seen:
            continue
        seen.add(layer)
        args_ = entry.get("arguments") or entry["command"].split()
        dirs = set()
        for i, a in enumerate(args_):
            d = a[2:] if a.startswith("-I") and len(a) > 2 else (args_[i + 1] if a == "-I" else None)
            if d is None:
                continue
            d = os.path.realpath(os.path.join(entry["directory"], d))
            if d.endswith(".p"):
                continue  # the target's private folder (meson's, for its objects)
            for root in (os.path.realpath(build), os.path.realpath(src)):
                if d == root or d.startswith(root + os.sep):
                    dirs.add(os.path.relpath(d, root))
                    break
        ours = set(d for d in dirs if d.startswith("src"))
        want = set("src/" + l for l in allowed[layer] | {layer})
        if ours != want:
            fail("%s is compiled with %s on its include path, not %s" % (
                rel, ", ".join(sorted(ours)) or "nothing of src/", ", ".join(sorted(want))))
        other = dirs - ours
        if other:
            fail("%s is compiled with %s on its include path (outside the layers)" % (
                rel, ", ".join(sorted(other))))
else:
    fail("no %s: the include paths were not checked" % commands)


# --- report --------------------------------------------------------------------

if report_only or failures:
    total = sum(len(d) for _, (d, _) in objs.items())
    print("# %d objects, %d names defined, %d uses between objects, %d between layers"
          % (len(objs), total, sum(len(n) for e in edges.values() for n in e.values()),
             sum(between.values())))
    for (a, b), n in sorted(between.items()):
        print("#   %s -> %s: %d" % (a, b, n))
    print("# %d call cycles between object files%s" % (
        len(found), (": " + "; ".join("%d files" % len(c) for c in found)) if found else ""))
for f in failures:
    print("not ok: " + f)
if report_only:
    sys.exit(0)
sys.exit(1 if failures else 0)
