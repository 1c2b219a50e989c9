# scripts/lib/container.sh - the container image's plumbing, shared by
# scripts/package --image and the container tests (sourced; the caller has
# set $repo). Never pulls: the base is made here when absent.
#
# podman, always with Debian's runc (crun, podman's default, refuses a
# kernel with hybrid cgroups: "cgroups in hybrid mode not supported") and
# cgroupfs (no systemd session needed); root's storage, so that the base
# made once serves every checkout of this machine (CI's fresh clones too).

container_podman() {  # container_podman ARGS...: podman as this machine runs it
  local runtime=() limits=()
  if [[ -x /usr/sbin/runc ]]; then runtime=(--runtime /usr/sbin/runc); fi
  # A container keeps this shell's limit of open files and at most
  # kernel.pid_max processes: podman raises them by default (nofile
  # 1048576), which a sandboxed machine (this one) refuses, as it refuses
  # nproc above pid_max ("error setting rlimit type 7 (or 6): operation not
  # permitted").
  if [[ $1 == run ]]; then
    local nproc
    nproc=$(ulimit -Hu)
    [[ $nproc != unlimited ]] && ((nproc < $(cat /proc/sys/kernel/pid_max))) \
      || nproc=$(cat /proc/sys/kernel/pid_max)
    shift
    limits=(run --ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" --ulimit "nproc=$nproc:$nproc")
  fi
  podman "${runtime[@]}" --cgroup-manager cgroupfs "${limits[@]}" "$@"
}

# What the base holds besides Debian's minbase: the libraries the package
# Depends on (scripts/package computes them with dpkg-shlibdeps; a base
# that lacks one still works, its install then fetches it), and adduser.
container_base_packages="adduser librdkafka1 libmariadb3 libglib2.0-0 libjson-glib-1.0-0
  libpcre2-8-0 libmicrohttpd12"
# The name the Containerfile starts FROM.
container_base_name=docker.io/library/debian:bookworm-slim

# The one place that says how the local base is made. A key of what it
# holds labels it: made again only when the list (or this recipe) changes.
# An image of that name that is not ours (Debian's own, pulled where a
# registry is reachable) is used as it is.
container_base() {  # container_base: ensures $container_base_name; says what it did
  local key have tar dir
  key=$( (echo "$container_base_packages"; declare -f container_base) | sha256sum | cut -c1-16)
  if container_podman image exists "$container_base_name"; then
    have=$(container_podman image inspect -f '{{ index .Labels "ktally.base" }}' "$container_base_name" 2> /dev/null || true)
    if [[ $have == "$key" ]]; then
      echo "base $container_base_name: made here before (key $key)"; return 0
    elif [[ -z $have || $have == "<no value>" ]]; then
      echo "base $container_base_name: present, not made here: used as it is"; return 0
    fi
  fi
  command -v mmdebstrap > /dev/null || { echo "container_base: mmdebstrap is missing (scripts/setup installs it)" >&2; return 1; }
  dir=$repo/build/container-base
  tar=$dir/bookworm-slim-$key.tar
  mkdir -p "$dir"
  if [[ ! -s $tar ]]; then
    echo "base $container_base_name: making it with mmdebstrap (Debian's packages, about a minute)"
    # slim's exclusions (docker-debian-artifacts' /etc/dpkg/dpkg.cfg.d/docker),
    # kept in the image for what is installed later; merged /usr as bookworm has it.
    mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
      --include="$(echo $container_base_packages | tr ' ' ,)" \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
      --dpkgopt='path-exclude=/usr/share/lintian/*' --dpkgopt='path-exclude=/usr/share/linda/*' \
      --aptopt='Acquire::Languages "none"' \
      --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/apt "$1"/var/log/dpkg.log' \
      --format=tar bookworm "$tar.part" || { rm -rf "$tar.part"; return 1; }
    mv "$tar.part" "$tar"
    # Older bases of other keys are of no use any more.
    find "$dir" -name 'bookworm-slim-*.tar' ! -name "$(basename "$tar")" -delete
  fi
  container_podman import --quiet --change 'CMD ["bash"]' --change "LABEL ktally.base=$key" \
    "$tar" "$container_base_name" > /dev/null
  echo "base $container_base_name: imported from $tar (key $key)"
}

container_build() {  # container_build DEB TAG...: the image of DEB, tagged TAG...
  local deb=$1 ctx; shift
  ctx=$(mktemp -d)
  cp "$deb" "$ctx/"
  local tags=()
  for t in "$@"; do tags+=(--tag "$t"); done
  # --network host: no network set-up needed (an install from the base
  # fetches nothing; from the real slim image it reaches Debian's archive).
  container_podman build --quiet --pull=never --network host --layers=false \
    -f "$repo/scripts/container/Containerfile" "${tags[@]}" "$ctx" > /dev/null \
    || { rm -rf "$ctx"; return 1; }
  rm -rf "$ctx"
}

container_runs() {  # container_runs IMAGE: whether podman can run a container here; if not, why on stdout
  local out
  if ! command -v podman > /dev/null; then echo "podman is not installed (scripts/setup installs it)"; return 1; fi
  if out=$(container_podman run --rm --network host --pull=never --entrypoint /bin/true "$1" 2>&1); then
    return 0
  fi
  echo "podman cannot run a container here: $(tail -1 <<< "$out")"; return 1
}
