"""The clients of benches/kv_hostile.sh, against a server on PORT whose
process is PID: prints one line of figures per measurement.

  memory: the server's RSS before a client opens 9,000 subscriptions, while
          it holds them, and after it leaves (once a PUBLISH to its last
          channel reaches nobody);
  long:   a command of 300,000 one-byte arguments (DEL, then SUBSCRIBE),
          the time from its first byte sent to its whole answer, and the
          slowest PING another connection (another process) saw meanwhile.
"""
import socket
import subprocess
import sys
import time

PORT, PID = int(sys.argv[1]), int(sys.argv[2])
CHANNELS, ARGS = 9_000, 300_000


def conn():
    s = socket.create_connection(("127.0.0.1", PORT))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Reader:
    """Replies read from a socket: a buffer and a position in it, so that
    many small replies cost time in proportion to their bytes."""

    def __init__(self, s):
        self.s, self.buf, self.pos = s, bytearray(), 0

    def fill(self):
        if self.pos > (1 << 20):
            del self.buf[:self.pos]
            self.pos = 0
        k = self.s.recv(1 << 20)
        if not k:
            raise SystemExit("connection closed")
        self.buf += k

    def line(self):
        while (end := self.buf.find(b"\r\n", self.pos)) < 0:
            self.fill()
        line = bytes(self.buf[self.pos:end])
        self.pos = end + 2
        return line

    def reply(self):
        line = self.line()
        if line[:1] == b"*":
            return [self.reply() for _ in range(int(line[1:]))]
        if line[:1] == b"$" and line != b"$-1":
            n = int(line[1:])
            while len(self.buf) - self.pos < n + 2:
                self.fill()
            data = bytes(self.buf[self.pos:self.pos + n])
            self.pos += n + 2
            return data
        return line


def rss_kib():
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def call(r, args):
    r.s.sendall(encode(args))
    return r.reply()


def memory():
    p = Reader(conn())
    assert call(p, [b"PING"]) == b"+PONG"
    time.sleep(0.5)
    before = rss_kib()
    c = Reader(conn())
    names = [b"channel:%d" % i for i in range(CHANNELS)]
    c.s.sendall(encode([b"SUBSCRIBE"] + names))
    for _ in names:
        c.reply()
    held = rss_kib()
    c.s.close()
    while call(p, [b"PUBLISH", names[-1], b"x"]) != b":0":
        time.sleep(0.001)
    time.sleep(0.5)
    after = rss_kib()
    print("memory: RSS %d KiB before, %d KiB holding %d subscriptions, %d KiB after (%+.1f%%)"
          % (before, held, CHANNELS, after, 100.0 * (after - before) / before))


def pinger():
    """Another client: PING after PING until its stdin closes; prints each
    PING's start (monotonic, the system's clock) and round trip."""
    r = Reader(conn())
    import select
    while not select.select([sys.stdin], [], [], 0)[0]:
        start = time.monotonic()
        r.s.sendall(b"PING\r\n")
        assert r.line() == b"+PONG"
        print("%.6f %.6f" % (start, time.monotonic() - start), flush=True)


def long_command(name):
    c = Reader(conn())
    assert call(c, [b"PING"]) == b"+PONG"
    args = [name] + [bytes([97 + i % 26]) for i in range(ARGS - 1)]
    wire = encode(args)
    ping = subprocess.Popen([sys.executable, __file__, str(PORT), str(PID), "ping"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    start = time.monotonic()
    c.s.sendall(wire)
    if name == b"DEL":
        reply = c.reply()
    else:
        # 299,999 replies: their length is known, their parsing in Python
        # would be what is timed.
        seen, total = set(), 0
        for a in args[1:]:
            seen.add(a)
            total += len(b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:%d\r\n" % len(seen))
        got = len(c.buf) - c.pos
        while got < total:
            k = c.s.recv(1 << 22)
            if not k:
                raise SystemExit("connection closed")
            got += len(k)
            tail = k[-8:]
        reply = tail
    took = time.monotonic() - start
    time.sleep(0.05)
    ping.stdin.close()
    out = ping.stdout.read()
    ping.wait()
    during = [float(l.split()[1]) for l in out.splitlines()
              if start - 0.001 <= float(l.split()[0]) <= start + took]
    slowest = max(during) if during else float("nan")
    print("long: %s of %d one-byte arguments (%.1f MB) answered in %.1f ms; "
          "slowest of %d PINGs meanwhile %.2f ms (last reply %r)"
          % (name.decode(), ARGS, len(wire) / 1e6, took * 1000, len(during), slowest * 1000,
             reply if not isinstance(reply, list) else reply[-1]))


if sys.argv[3:] == ["ping"]:
    pinger()
elif sys.argv[3:] == ["memory"]:
    memory()
elif sys.argv[3:] == ["long"]:
    long_command(b"DEL")
    long_command(b"SUBSCRIBE")
