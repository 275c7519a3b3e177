"""The clients of benches/kv_big_value.sh: SET a 100 MiB value, then GET it
from one process while this one sends PING after PING on another
connection; prints the slowest PING in ms and how many were sent."""
import socket
import subprocess
import sys
import time

PORT, SIZE = int(sys.argv[1]), 100 << 20


def conn():
    s = socket.create_connection(("127.0.0.1", PORT))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_exact(s, n):
    buf = memoryview(bytearray(n))
    got = 0
    while got < n:
        k = s.recv_into(buf[got:], min(1 << 20, n - got))
        if not k:
            raise SystemExit("connection closed")
        got += k
    return bytes(buf[:64])


if sys.argv[2:] == ["get"]:
    g = conn()
    g.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n")
    read_exact(g, len(b"$%d\r\n" % SIZE) + SIZE + 2)
    sys.exit(0)

setter = conn()
setter.sendall(b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n" % SIZE + b"v" * SIZE + b"\r\n")
assert read_exact(setter, 5) == b"+OK\r\n"
# The reader is a process of its own: the PINGs never wait on it.
getter = subprocess.Popen([sys.executable, __file__, str(PORT), "get"])
p = conn()
slowest, pings = 0.0, 0
while getter.poll() is None:
    start = time.perf_counter()
    p.sendall(b"PING\r\n")
    assert read_exact(p, 7) == b"+PONG\r\n"
    slowest = max(slowest, time.perf_counter() - start)
    pings += 1
assert getter.wait() == 0
print("%.2f %d" % (slowest * 1000, pings))
