# Shared by the scripts in benches/ (sourced, never run): installing the
# tools a measurement needs, finding a free port, waiting for a server to
# listen, and reading callgrind's output.

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

# wait_for_port PORT: waits (up to 30 s; valgrind starts slowly) until
# something accepts on 127.0.0.1:PORT; exits the script if nothing does.
wait_for_port() {
    for _ in $(seq 1 300); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "the server never listened on $1" >&2
    exit 1
}

# callgrind_top FILE N COUNT: the N functions of callgrind's FILE that ran
# the most instructions of their own (callees excluded), each over COUNT
# (messages, requests): the cost of one unit of work, by function.
callgrind_top() {
    callgrind_annotate --inclusive=no "$1" 2>/dev/null |
        awk -v n="$2" -v m="$3" '
            /^-+$/ { rule++; next }
            /PROGRAM TOTALS/ { next }
            rule >= 3 && $1 ~ /^[0-9,]+$/ && shown < n {
                gsub(",", "", $1)
                name = $0; sub(/^ *[0-9,]+ *(\([^)]*\))? */, "", name)
                sub(/ \[[^]]*\]$/, "", name)
                printf "  %7.1f  %s\n", $1 / m, name
                shown++
            }'
}
