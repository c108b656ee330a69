"""Read-only mode as kazoo sees it, for test/compat/readonly_test.go.

Usage: /usr/bin/python3 kazoo_ro.py <mode> <host:port>

  setup  create /ro with data "before" (a read-write session)
  ro     connect with read_only=True, print the connection state, read, and try every
         write (and sync): one line per step, stable across servers
  rw     connect without read_only for at most 3 s: "connected" or "refused"

Only what a client observes is printed (no session ids, no zxids).
"""

import sys

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError


def attempt(name, fn):
    try:
        r = fn()
        print("%s ok %r" % (name, r))
    except KazooException as e:
        print("%s %s" % (name, type(e).__name__))


def main():
    mode, addr = sys.argv[1], sys.argv[2]
    if mode == "setup":
        c = KazooClient(hosts=addr, timeout=10)
        c.start(timeout=15)
        c.create("/ro", b"before")
        c.stop()
        c.close()
        print("setup ok")
        return
    if mode == "rw":
        c = KazooClient(hosts=addr, timeout=10)
        try:
            c.start(timeout=3)
            print("rw connected state=%s" % c.client_state)
        except KazooTimeoutError:
            print("rw refused")
        c.stop()
        c.close()
        return
    c = KazooClient(hosts=addr, timeout=10, read_only=True)
    c.start(timeout=15)
    print("state %s" % c.client_state)
    data, stat = c.get("/ro")
    print("get /ro %r version=%d" % (data, stat.version))
    print("exists /missing %r" % (c.exists("/missing"),))
    print("children / %s" % ",".join(sorted(k for k in c.get_children("/") if k != "zookeeper")))
    attempt("create", lambda: c.create("/ro2", b"x"))
    attempt("create ephemeral", lambda: c.create("/ro3", b"x", ephemeral=True))
    attempt("set", lambda: c.set("/ro", b"after"))
    attempt("delete", lambda: c.delete("/ro"))
    attempt("sync", lambda: c.sync("/ro"))

    def txn():
        t = c.transaction()
        t.check("/ro", 0)
        return t.commit()

    attempt("transaction", txn)
    data, _ = c.get("/ro")
    print("get /ro again %r" % (data,))
    c.stop()
    c.close()


main()
