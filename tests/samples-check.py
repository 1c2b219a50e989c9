#!/usr/bin/python3
"""tests/samples-check.py - the container samples that no machine here runs
(samples/container/kubernetes.yaml: no cluster; compose.yaml: no registry
for its kafka and mariadb images), checked against ktally and its image
where a machine can (meson test `samples`, suite unit):

- the settings each gives ktally (the Kubernetes ConfigMap's ktally.conf
  and the Deployment's KTALLY_ variables; compose's KTALLY_ variables over
  the package's ktally.conf), with the image's own environment
  (scripts/container/Containerfile's ENV), pass `ktally config --check`,
  and none of their KTALLY_ variables is one ktally ignores (a typo);
- the probes are ktally's /livez and /readyz on the port the image
  exposes; the user is the image's; the image is the one
  `scripts/package --image` names; nothing writable, no capability.

Usage: samples-check.py KTALLY SOURCE_ROOT VERSION (meson passes them)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ktally, src, version = sys.argv[1:4]
failures = []


def fail(what):
    failures.append(what)


def read(path):
    with open(os.path.join(src, path), encoding="utf-8") as f:
        return f.read()


containerfile = read("scripts/container/Containerfile")
image_env = dict(re.findall(r"(KTALLY_[A-Z_]+)=(\S+)", containerfile))
image_user = re.search(r"^USER (\d+):(\d+)$", containerfile, re.M)
image_port = re.search(r"^EXPOSE (\d+)$", containerfile, re.M)
image_name = "localhost/ktally:" + version
if not image_user or not image_port or "KTALLY_CONFIG" not in image_env:
    sys.exit("samples-check: the Containerfile has no USER N:N, EXPOSE or KTALLY_CONFIG")
work = tempfile.mkdtemp(prefix="kt-samples-")
password = os.path.join(work, "pw")
with open(password, "w") as f:
    f.write("change-me\n")
os.chmod(password, 0o600)


def check(what, env, conf_text):
    """config --check of the image's environment, then @env, over @conf_text
    as /etc/ktally/ktally.conf; the password file is a local one."""
    conf = os.path.join(work, "ktally.conf")
    with open(conf, "w") as f:
        f.write(conf_text)
    full = {k: v for k, v in os.environ.items() if not k.startswith("KTALLY_")}
    full.update(image_env)
    full.update(env)
    full.update(KTALLY_CONFIG=conf, KTALLY_DB_PASSWORD_FILE=password)
    out = subprocess.run([ktally, "config", "--check"], env=full, capture_output=True, text=True)
    if out.returncode != 0:
        fail("%s: config --check: exit %d: %s" % (what, out.returncode, out.stderr.strip()))
    if "# ignored" in out.stdout:
        fail("%s: a KTALLY_ variable that is no setting: %s" % (what, [
            l for l in out.stdout.splitlines() if l.startswith("# ignored")]))
    return out.stdout


# Kubernetes.
docs = {d["kind"]: d for d in yaml.safe_load_all(read("samples/container/kubernetes.yaml")) if d}
deploy, config_map = docs["Deployment"], docs["ConfigMap"]
pod = deploy["spec"]["template"]["spec"]
box = pod["containers"][0]
env = {e["name"]: e["value"] for e in box.get("env", [])}
out = check("kubernetes.yaml", env, config_map["data"]["ktally.conf"])
for key in ("brokers = kafka-0.kafka:9092", "group = ktally-app-logs", "log-format = json"):
    if key not in out:
        fail("kubernetes.yaml: config --check does not show '%s'" % key)
port = int(image_port.group(1))
if [p["containerPort"] for p in box["ports"]] != [port]:
    fail("kubernetes.yaml: containerPort is not the image's %d" % port)
for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
    if box[probe]["httpGet"]["path"] != path or box[probe]["httpGet"]["port"] != box["ports"][0]["name"]:
        fail("kubernetes.yaml: %s is not %s on the image's port" % (probe, path))
ctx = pod["securityContext"]
if str(ctx["runAsUser"]) != image_user.group(1) or str(ctx["fsGroup"]) != image_user.group(2):
    fail("kubernetes.yaml: runAsUser/fsGroup are not the image's user %s" % image_user.group(0))
if box["image"] != image_name:
    fail("kubernetes.yaml: image %s, scripts/package --image makes %s" % (box["image"], image_name))
sec = box["securityContext"]
if not (sec["readOnlyRootFilesystem"] and sec["capabilities"]["drop"] == ["ALL"]
        and sec["allowPrivilegeEscalation"] is False):
    fail("kubernetes.yaml: not read-only, or capabilities, or privilege escalation")
secret_volume = [v for v in pod["volumes"] if "secret" in v][0]["secret"]
if secret_volume["defaultMode"] != 0o440:
    fail("kubernetes.yaml: the Secret's mode is %o, ktally takes root's 0440" % secret_volume["defaultMode"])
mounts = {m["mountPath"] for m in box["volumeMounts"]}
conf_path = os.path.dirname(image_env["KTALLY_CONFIG"])
if conf_path not in mounts:
    fail("kubernetes.yaml: the ConfigMap is not mounted at %s" % conf_path)
pw_file = re.search(r"password-file = (\S+)", config_map["data"]["ktally.conf"]).group(1)
if os.path.dirname(pw_file) not in mounts:
    fail("kubernetes.yaml: the password file %s is not where the Secret is mounted" % pw_file)

# compose.
compose = yaml.safe_load(read("samples/container/compose.yaml"))
service = compose["services"]["ktally"]
out = check("compose.yaml", {k: str(v) for k, v in service["environment"].items()},
            read("samples/ktally.conf"))
for key in ("brokers = kafka:9092", "host = mariadb", "interval = 2"):
    if key not in out:
        fail("compose.yaml: config --check does not show '%s'" % key)
if service["image"] != image_name:
    fail("compose.yaml: image %s, scripts/package --image makes %s" % (service["image"], image_name))
if not (service["read_only"] and service["cap_drop"] == ["ALL"]
        and "no-new-privileges:true" in service["security_opt"]):
    fail("compose.yaml: not read-only, or capabilities, or no-new-privileges")
if not any(p.endswith(":%d" % port) for p in service["ports"]):
    fail("compose.yaml: the image's port %d is not published" % port)

shutil.rmtree(work)
for f in failures:
    print("FAIL: " + f)
print("samples-check: %d failures" % len(failures))
sys.exit(1 if failures else 0)
