#!/usr/bin/env bash
# Container runtimes for the tests, set up once per machine (idempotent; needs root):
#   .ci/containers.sh setup   install docker.io, podman, runc, catatonit, busybox-static if missing; start
#                             dockerd when no daemon answers; import the test images when absent
#   .ci/containers.sh stop    stop the dockerd that `setup` started (its pid file), if any
#   .ci/containers.sh check   exit 0 when both runtimes answer and both images exist
# Images (no registry is reachable here, so they are imported from local root filesystems):
#   local/busybox  busybox-static and its applet links
#   local/python   busybox plus Debian's python3.11 interpreter, its shared libraries and stdlib
# dockerd runs with --iptables=false --bridge=none (no network setup needed); podman uses runc
# and 1024 nofile/nproc ulimits (crun fails on this machine kind's rlimits), set in a
# containers.conf drop-in. State lives under $AR_CONTAINERS_STATE (default /var/lib/ar-containers).
set -euo pipefail

STATE="${AR_CONTAINERS_STATE:-/var/lib/ar-containers}"
PIDFILE="$STATE/dockerd.pid"
IMAGES=(local/busybox local/python)

log() { echo "containers.sh: $*" >&2; }

install_missing() {
    local need=()
    command -v dockerd >/dev/null || need+=(docker.io)
    command -v podman >/dev/null || need+=(podman)
    command -v runc >/dev/null || need+=(runc)
    [ -x /bin/busybox ] || need+=(busybox-static)
    [ -x /usr/libexec/podman/catatonit ] || need+=(catatonit)  # podman's --init
    [ -x /usr/bin/python3.11 ] || need+=(python3.11)  # Debian's, not a pyenv shim
    if [ ${#need[@]} -gt 0 ]; then
        log "installing ${need[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null \
            || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null; }
    fi
    mkdir -p /etc/containers/containers.conf.d
    cat > /etc/containers/containers.conf.d/50-autoresearch.conf <<'EOF'
# written by autoresearch .ci/containers.sh: crun fails on rlimits/cgroups on this machine kind
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
EOF
}

start_dockerd() {
    if docker info >/dev/null 2>&1; then return; fi
    mkdir -p "$STATE/docker"
    log "starting dockerd (data root $STATE/docker)"
    setsid dockerd --data-root "$STATE/docker" --exec-root "$STATE/docker-exec" --pidfile "$STATE/docker-own.pid" \
        --iptables=false --bridge=none >"$STATE/dockerd.log" 2>&1 < /dev/null &
    echo $! > "$PIDFILE"
    for _ in $(seq 1 100); do
        docker info >/dev/null 2>&1 && return
        sleep 0.2
    done
    log "dockerd did not answer within 20 s; its log: $STATE/dockerd.log"
    tail -20 "$STATE/dockerd.log" >&2
    exit 1
}

rootfs_busybox() {  # $1: an empty directory
    mkdir -p "$1/bin" "$1/tmp" "$1/etc" "$1/proc" "$1/sys" "$1/dev" "$1/data"
    cp /bin/busybox "$1/bin/busybox"
    for applet in $(/bin/busybox --list); do
        [ "$applet" = busybox ] || ln -sf busybox "$1/bin/$applet"
    done
    echo "root:x:0:0:root:/root:/bin/sh" > "$1/etc/passwd"
    echo "root:x:0:" > "$1/etc/group"
    chmod 1777 "$1/tmp"
}

rootfs_python() {  # $1: an empty directory
    rootfs_busybox "$1"
    local py
    py=/usr/bin/python3.11
    mkdir -p "$1/usr/bin" "$1/usr/lib"
    cp "$py" "$1/usr/bin/python3.11"
    ln -s python3.11 "$1/usr/bin/python3"
    ln -s python3.11 "$1/usr/bin/python"
    # the interpreter's shared libraries, at the same paths
    for lib in $(ldd "$py" 2>/dev/null | grep -o '/[^ ]*'); do
        mkdir -p "$1$(dirname "$lib")"
        cp -L "$lib" "$1$lib"
    done
    tar -C /usr/lib -c --exclude='__pycache__' --exclude='python3.11/test' --exclude='python3.11/dist-packages' \
        --exclude='python3.11/idlelib' --exclude='python3.11/tkinter' python3.11 | tar -C "$1/usr/lib" -x
    # stdlib extension modules' own libraries (ssl, sqlite, ffi ...), best effort
    for so in "$1"/usr/lib/python3.11/lib-dynload/*.so; do
        for lib in $(ldd "$so" 2>/dev/null | grep -o '/[^ ]*' || true); do
            [ -e "$1$lib" ] || { mkdir -p "$1$(dirname "$lib")"; cp -L "$lib" "$1$lib"; }
        done
    done
}

import_images() {
    local runtime image kind dir
    for runtime in docker podman; do
        for image in "${IMAGES[@]}"; do
            if "$runtime" image inspect "$image" >/dev/null 2>&1; then continue; fi
            kind="${image#local/}"
            dir="$(mktemp -d)"
            "rootfs_$kind" "$dir"
            log "importing $image into $runtime"
            tar -C "$dir" -c . | "$runtime" import --change 'CMD ["/bin/sh"]' \
                --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' - "$image" >/dev/null 2>"$STATE/import.log" \
                || { cat "$STATE/import.log" >&2; exit 1; }
            rm -rf "$dir"
        done
    done
}

check() {
    docker info >/dev/null 2>&1 || { log "docker: no daemon answers"; return 1; }
    podman info >/dev/null 2>&1 || { log "podman info fails"; return 1; }
    for runtime in docker podman; do
        for image in "${IMAGES[@]}"; do
            "$runtime" image inspect "$image" >/dev/null 2>&1 || { log "$runtime lacks image $image"; return 1; }
        done
    done
}

stop_dockerd() {
    [ -f "$PIDFILE" ] || return 0
    local pid
    pid="$(cat "$PIDFILE")"
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$PIDFILE"
}

case "${1:-setup}" in
    setup)
        [ "$(id -u)" = 0 ] || { log "needs root (apt-get, dockerd)"; exit 1; }
        mkdir -p "$STATE"
        install_missing
        start_dockerd
        import_images
        check
        ;;
    stop) stop_dockerd ;;
    check) check ;;
    *) log "usage: $0 setup|stop|check"; exit 2 ;;
esac
