#!/usr/bin/env bash
# Builds Pressroom's six service images with podman from the Dockerfile at the
# repository's root and tags them pressroom/<service>:<tag> (default: the root
# package.json's version). Installs podman, runc, catatonit, debootstrap, netavark,
# aardvark-dns and iptables when missing. No registry needs to answer: the base image, debian:trixie-slim, is
# made once from Debian's archive with debootstrap and imported under that name.
# See deploy/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
# One build at a time on a machine: the test files that need the images may run side by side.
exec 9>"${TMPDIR:-/tmp}/pressroom-images.lock"
flock 9
export CONTAINERS_CONF="$root/deploy/podman/containers.conf"

services=(gateway identity metering render storage webhook)
tag="${1:-$(node -p 'require("./package.json").version')}"
base=docker.io/library/debian:trixie-slim

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
missing=()
for tool in podman runc catatonit debootstrap; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || [ -x "/usr/bin/$tool" ] || [ -x "/usr/libexec/podman/$tool" ] || missing+=("$tool")
done
# netavark with aardvark-dns: containers on one network find each other by name (the container suite).
for helper in netavark aardvark-dns; do [ -x "/usr/lib/podman/$helper" ] || missing+=("$helper"); done
command -v iptables >/dev/null 2>&1 || [ -x /usr/sbin/iptables ] || missing+=(iptables)
if [ ${#missing[@]} -gt 0 ]; then
  echo "images: installing ${missing[*]} with apt-get"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
podman=("${sudo_cmd[@]}" env "CONTAINERS_CONF=$CONTAINERS_CONF" podman)

# The Debian mirror this machine's apt uses (deb822 or one-line sources), else deb.debian.org.
debian_mirror() {
  local uri
  uri="$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | grep -oE '(https?://[^ ]+/debian)/?( |$)' | grep -v -- '-security' | head -n1 | tr -d ' ')" || true
  echo "${uri:-http://deb.debian.org/debian}"
}

if ! "${podman[@]}" image exists "$base"; then
  mirror="$(debian_mirror)"
  echo "images: making $base with debootstrap from $mirror"
  rootfs="$(mktemp -d /var/tmp/pressroom-rootfs-XXXXXX)"
  trap '"${sudo_cmd[@]}" rm -rf "$rootfs"' EXIT
  "${sudo_cmd[@]}" debootstrap --variant=minbase trixie "$rootfs" "$mirror" >/dev/null
  # What the official slim image has: updates and security suites, and no documentation,
  # manual pages or translations installed by later packages.
  "${sudo_cmd[@]}" rm -f "$rootfs/etc/apt/sources.list"
  "${sudo_cmd[@]}" tee "$rootfs/etc/apt/sources.list.d/debian.sources" >/dev/null <<SOURCES
Types: deb
URIs: ${mirror%/}
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  "${sudo_cmd[@]}" tee "$rootfs/etc/dpkg/dpkg.cfg.d/slim" >/dev/null <<'SLIM'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
SLIM
  "${sudo_cmd[@]}" rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/usr/share/doc "$rootfs"/usr/share/man "$rootfs"/usr/share/info "$rootfs"/usr/share/locale
  "${sudo_cmd[@]}" tar -C "$rootfs" -c . | "${podman[@]}" import --change 'CMD ["bash"]' - "$base" >/dev/null
fi

# The npm registry may sit behind a TLS-inspecting proxy whose CA only this machine trusts:
# its bundle goes in as a build secret (never into a layer), and proxy settings as build args.
build_args=()
extra_ca="${PRESSROOM_EXTRA_CA:-/etc/ssl/certs/ca-certificates.crt}"
[ -s "$extra_ca" ] && build_args+=(--secret "id=extra-ca,src=$extra_ca")
for var in HTTP_PROXY HTTPS_PROXY NO_PROXY; do
  lower="${var,,}"
  value="${!var:-${!lower:-}}"
  [ -n "$value" ] && build_args+=(--build-arg "$var=$value")
done
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
labels=(--label "org.opencontainers.image.version=$tag"
        --label "org.opencontainers.image.revision=$revision"
        --label "org.opencontainers.image.created=$(date -u +%Y-%m-%dT%H:%M:%SZ)")

for service in "${services[@]}"; do
  start=$SECONDS
  echo "images: building pressroom/$service:$tag"
  "${podman[@]}" build --layers --target "$service" --build-arg "SERVICE=$service" "${build_args[@]}" "${labels[@]}" \
    --tag "pressroom/$service:$tag" --file Dockerfile . >"${PRESSROOM_BUILD_LOG:-/dev/null}" \
    || { echo "images: building $service failed; rerun with PRESSROOM_BUILD_LOG=/dev/stderr to see why" >&2; exit 1; }
  echo "images: pressroom/$service:$tag built in $((SECONDS - start)) s"
done

for service in "${services[@]}"; do
  "${podman[@]}" image inspect --format "{{.Size}}" "pressroom/$service:$tag" \
    | awk -v name="pressroom/$service:$tag" '{ printf "%-32s %6.0f MB\n", name, $1 / 1000000 }'
done
