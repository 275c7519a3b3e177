# Shared by the scripts in benches/ (sourced, never run): installing the
# tools a measurement needs, and finding a free port.

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# need COMMAND PACKAGE: installs PACKAGE with apt-get unless COMMAND is
# already there; fails if it cannot.
need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    echo "installing $2 ..." >&2
    $sudo apt-get install -y "$2" >/dev/null 2>&1 \
        || { $sudo apt-get update >/dev/null 2>&1 && $sudo apt-get install -y "$2" >/dev/null 2>&1; }
}

# A port nobody listens on right now: bind 0, read it back, let it go.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
