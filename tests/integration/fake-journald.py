#!/usr/bin/python3
"""fake-journald.py OUT COMMAND...: runs COMMAND as systemd would run a
service under journald, and writes what journald would receive to OUT.

Call it inside a private mount namespace whose /run/systemd is a fresh
tmpfs (unshare -m): it listens on /run/systemd/journal/socket (the native
protocol, where GLib's journald writer sends each record's fields) and on
/run/systemd/journal/stdout (the stream every line of stderr goes to),
which is COMMAND's stderr, as under systemd. OUT gets one JSON object per
native entry ({"FIELD": "value", ...}), and one {"STREAM": line} per line
written to the stream. Exits with COMMAND's status."""
import json
import os
import select
import socket
import struct
import subprocess
import sys

DIR = "/run/systemd/journal"


def parse_native(data):
    """journald's native protocol: KEY=value lines, or KEY, a 64-bit
    little-endian length, the bytes and a newline."""
    entry, pos = {}, 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        line = data[pos:nl]
        if b"=" in line:
            key, value = line.split(b"=", 1)
            pos = nl + 1
        else:
            key = line
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            value = data[nl + 9:nl + 9 + n]
            pos = nl + 9 + n + 1
        entry[key.decode()] = value.decode("utf-8", "replace")
    return entry


def main():
    out_path, command = sys.argv[1], sys.argv[2:]
    os.makedirs(DIR, exist_ok=True)
    native = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    native.bind(f"{DIR}/socket")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"{DIR}/stdout")
    listener.listen(1)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(f"{DIR}/stdout")
    server, _ = listener.accept()
    child = subprocess.Popen(command, stderr=client.fileno())
    client.close()
    entries, stream = [], b""
    while True:
        ready, _, _ = select.select([native, server], [], [], 0.05)
        if native in ready:
            entries.append(parse_native(native.recv(1 << 20)))
        if server in ready:
            chunk = server.recv(1 << 16)
            stream += chunk
            if not chunk and child.poll() is not None:
                break
        elif not ready and child.poll() is not None:
            break
    while True:  # what the child sent just before it ended
        ready, _, _ = select.select([native], [], [], 0.05)
        if not ready:
            break
        entries.append(parse_native(native.recv(1 << 20)))
    with open(out_path, "w") as out:
        for e in entries:
            out.write(json.dumps(e) + "\n")
        for line in stream.decode("utf-8", "replace").splitlines():
            out.write(json.dumps({"STREAM": line}) + "\n")
    sys.exit(child.returncode)


main()
