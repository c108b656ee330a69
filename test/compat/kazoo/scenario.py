"""Kazoo scenario of Warden's compatibility tier (test/compat/kazoo_test.go).

Usage: /usr/bin/python3 scenario.py HOST:PORT

Exercises the ZooKeeper API through kazoo (Debian's python3-kazoo, 2.8) and prints one
line per step, "step key=value ...", with stats printed field by field so that the Go side
can normalise zxids, times and session ids. The server must run with
extendedTypesEnabled=true, znode.container.checkIntervalMs small, and 4lw envi whitelisted
(kazoo's server_version() uses envi).

Every wait is bounded (WAIT seconds); a timeout prints "timeout ..." and exits non-zero.
"""

import sys
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.protocol.serialization import Create2, int_struct, long_struct, write_buffer, write_string
from kazoo.security import ACL, Id, make_digest_acl, make_acl, OPEN_ACL_UNSAFE, Permissions

WAIT = 20.0
STAT_FIELDS = ("czxid", "mzxid", "pzxid", "ctime", "mtime", "version", "cversion",
               "aversion", "ephemeralOwner", "dataLength", "numChildren")


def out(*parts):
    print(" ".join(str(p) for p in parts), flush=True)


def stat_line(stat):
    if stat is None:
        return "stat=None"
    fields = []
    for f in STAT_FIELDS:
        v = getattr(stat, f)
        if f in ("czxid", "mzxid", "pzxid"):
            v = hex(v)
        elif f == "ephemeralOwner":
            v = hex(v & 0xFFFFFFFFFFFFFFFF)
        fields.append("%s=%s" % (f, v))
    return " ".join(fields)


def acl_line(acls):
    return "[" + ",".join("%s:%s:%d" % (a.id.scheme, a.id.id, a.perms) for a in acls) + "]"


def step(name, fn):
    """Runs fn, prints name and its result or the exception's class name."""
    try:
        res = fn()
    except KazooException as e:
        out(name, "err=" + type(e).__name__)
        return None
    except Exception as e:  # client-side validation errors are part of the transcript too
        out(name, "err=" + type(e).__name__)
        return None
    out(name, "-> " + fmt(res))
    return res


def fmt(res):
    if res is None:
        return "None"
    if hasattr(res, "czxid"):
        return stat_line(res)
    if isinstance(res, tuple) and len(res) == 2 and hasattr(res[1], "czxid"):
        return "%s %s" % (fmt(res[0]), stat_line(res[1]))
    if isinstance(res, tuple) and len(res) == 2 and isinstance(res[0], list) and res[0] and isinstance(res[0][0], ACL):
        return "%s %s" % (acl_line(res[0]), stat_line(res[1]))
    if isinstance(res, list):
        return "[" + ",".join(fmt(r) for r in res) + "]"
    if isinstance(res, bytes):
        return "data=%r" % res
    if isinstance(res, Exception):
        return type(res).__name__
    return repr(res)


class CreateContainer(Create2):
    """The createContainer request (opcode 19): a create2 body with flags 4."""
    type = 19


class CreateTTL(object):
    """The createTTL request (opcode 21): create2 body followed by the TTL in ms."""
    type = 21

    def __init__(self, path, data, acl, flags, ttl):
        self.path, self.data, self.acl, self.flags, self.ttl = path, data, acl, flags, ttl

    def serialize(self):
        b = bytearray()
        b.extend(write_string(self.path))
        b.extend(write_buffer(self.data))
        b.extend(int_struct.pack(len(self.acl)))
        for acl in self.acl:
            b.extend(int_struct.pack(acl.perms) + write_string(acl.id.scheme) + write_string(acl.id.id))
        b.extend(int_struct.pack(self.flags))
        b.extend(long_struct.pack(self.ttl))
        return b

    @classmethod
    def deserialize(cls, bytes, offset):
        return Create2.deserialize(bytes, offset)


def call(zk, request):
    result = zk.handler.async_result()
    zk._call(request, result)
    return result.get(timeout=WAIT)


class Events(object):
    """Collects watch events in arrival order; wait() blocks until n have arrived."""

    def __init__(self):
        self.cond = threading.Condition()
        self.events = []

    def watcher(self, name):
        def cb(ev):
            with self.cond:
                self.events.append("%s type=%s path=%s" % (name, ev.type, ev.path))
                self.cond.notify_all()
        return cb

    def wait(self, n):
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.events) >= n, timeout=WAIT):
                out("timeout waiting for %d events, have %r" % (n, self.events))
                sys.exit(2)

    def dump(self):
        with self.cond:
            for e in self.events:
                out("event", e)
            self.events = []


def connect(hosts):
    zk = KazooClient(hosts=hosts, timeout=10.0)
    zk.start(timeout=WAIT)
    return zk


def main():
    hosts = sys.argv[1]
    zk = connect(hosts)
    out("connected session=%s" % hex(zk.client_id[0]))
    step("server_version", lambda: zk.server_version())
    step("command ruok", lambda: zk.command(b"ruok"))

    # Create in every mode.
    step("create /a", lambda: zk.create("/a", b"hello"))
    step("create /a again", lambda: zk.create("/a", b"x"))
    step("create /no/parent", lambda: zk.create("/no/parent", b"x"))
    step("create /mk/deep/path makepath", lambda: zk.create("/mk/deep/path", b"d", makepath=True))
    step("create /a/seq- sequence", lambda: zk.create("/a/seq-", b"", sequence=True))
    step("create /a/seq- sequence", lambda: zk.create("/a/seq-", b"", sequence=True))
    step("create /a/eph ephemeral", lambda: zk.create("/a/eph", b"e", ephemeral=True))
    step("create /a/eseq- ephemeral sequence", lambda: zk.create("/a/eseq-", b"", ephemeral=True, sequence=True))
    step("create /a/eph/kid", lambda: zk.create("/a/eph/kid", b""))
    step("create2 /a/c2 include_data", lambda: zk.create("/a/c2", b"c2", include_data=True))
    step("createContainer /cont", lambda: call(zk, CreateContainer("/cont", b"c", OPEN_ACL_UNSAFE, 4)))
    step("createTTL /ttl", lambda: call(zk, CreateTTL("/ttl", b"t", OPEN_ACL_UNSAFE, 5, 3600000)))
    step("createTTL /ttlseq-", lambda: call(zk, CreateTTL("/ttlseq-", b"t", OPEN_ACL_UNSAFE, 6, 3600000)))
    step("createTTL /ttlbad ttl=-1", lambda: call(zk, CreateTTL("/ttlbad", b"", OPEN_ACL_UNSAFE, 5, -1)))
    step("createTTL /ttlmode ephemeral", lambda: call(zk, CreateTTL("/ttlmode", b"", OPEN_ACL_UNSAFE, 1, 1000)))
    step("createContainer /cont2 mode=0", lambda: call(zk, CreateContainer("/cont2", b"", OPEN_ACL_UNSAFE, 0)))
    step("get_children /a", lambda: sorted(zk.get_children("/a")))
    step("get_children / include_data", lambda: (sorted(zk.get_children("/", include_data=True)[0]),
                                                 zk.get_children("/", include_data=True)[1]))

    # Get/set/exists/delete with versions.
    step("get /a", lambda: zk.get("/a"))
    step("set /a v0", lambda: zk.set("/a", b"v1", version=0))
    step("set /a v0 again", lambda: zk.set("/a", b"v2", version=0))
    step("set /a any", lambda: zk.set("/a", b"v2"))
    step("exists /a", lambda: zk.exists("/a"))
    step("exists /nothing", lambda: zk.exists("/nothing"))
    step("get /nothing", lambda: zk.get("/nothing"))
    step("delete /a non-empty", lambda: zk.delete("/a"))
    step("delete /a/c2 v5", lambda: zk.delete("/a/c2", version=5))
    step("delete /a/c2 v0", lambda: zk.delete("/a/c2", version=0))
    step("delete /nothing", lambda: zk.delete("/nothing"))
    step("delete /mk recursive", lambda: zk.delete("/mk", recursive=True))
    step("exists /mk", lambda: zk.exists("/mk"))
    step("set /big 1MiB-ish", lambda: zk.create("/big", b"x" * (1024 * 1023)))
    step("get /big length", lambda: len(zk.get("/big")[0]))
    step("create /toobig", lambda: zk.create("/toobig", b"x" * (1024 * 1024 + 1)))

    # ACLs: digest with add_auth, world, ip.
    digest = make_digest_acl("alice", "secret", all=True)
    step("create /secret digest", lambda: zk.create("/secret", b"s", acl=[digest]))
    step("get /secret noauth", lambda: zk.get("/secret"))
    step("get_acls /secret", lambda: zk.get_acls("/secret"))
    step("create /authacl without auth", lambda: zk.create("/authacl", b"", acl=[make_acl("auth", "", all=True)]))
    step("create /emptyacl", lambda: zk.create("/emptyacl", b"", acl=[]))
    step("get_acls /emptyacl", lambda: zk.get_acls("/emptyacl"))
    step("create /badscheme", lambda: zk.create("/badscheme", b"", acl=[make_acl("nosuch", "x", all=True)]))
    step("add_auth digest alice", lambda: zk.add_auth("digest", "alice:secret"))
    step("get /secret auth", lambda: zk.get("/secret"))
    step("create /authacl with auth", lambda: zk.create("/authacl", b"", acl=[make_acl("auth", "", read=True, admin=True)]))
    step("get_acls /authacl", lambda: zk.get_acls("/authacl"))
    step("set_acls /authacl v5", lambda: zk.set_acls("/authacl", OPEN_ACL_UNSAFE, version=5))
    step("set_acls /authacl v0", lambda: zk.set_acls("/authacl", [make_acl("world", "anyone", read=True)], version=0))
    step("get_acls /authacl", lambda: zk.get_acls("/authacl"))
    step("set /authacl noauth", lambda: zk.set("/authacl", b"x"))
    step("create /ip ip-acl", lambda: zk.create("/ip", b"ip", acl=[make_acl("ip", "127.0.0.1", read=True)]))
    step("get /ip", lambda: zk.get("/ip"))
    step("set /ip noauth", lambda: zk.set("/ip", b"x"))
    step("create /ipnet", lambda: zk.create("/ipnet", b"", acl=[make_acl("ip", "127.0.0.0/8", all=True)]))
    step("get /ipnet", lambda: zk.get("/ipnet"))
    step("create /ipbad", lambda: zk.create("/ipbad", b"", acl=[make_acl("ip", "300.1.1.1", all=True)]))
    other = connect(hosts)
    step("other get /secret noauth", lambda: other.get("/secret"))
    step("other add_auth wrong password", lambda: other.add_auth("digest", "alice:wrong"))
    step("other get /secret wrong password", lambda: other.get("/secret"))
    step("other add_auth unknown scheme", lambda: other.add_auth("nosuch", "x"))
    step("other connected after bad scheme", lambda: other.connected)
    other.stop()
    other.close()

    # Transactions.
    def txn_ok():
        t = zk.transaction()
        t.create("/t", b"t")
        t.create("/t/s-", b"", sequence=True)
        t.set_data("/t", b"t2", version=0)
        t.check("/t", 1)
        t.delete("/ip")
        return t.commit()
    step("transaction ok", txn_ok)

    def txn_fail():
        t = zk.transaction()
        t.create("/t2", b"")
        t.check("/t", 9)
        t.set_data("/t", b"t3")
        return t.commit()
    step("transaction fail", txn_fail)
    step("exists /t2", lambda: zk.exists("/t2"))

    def txn_noauth():
        t = zk.transaction()
        t.set_data("/t", b"ok")
        t.delete("/nothing")
        return t.commit()
    step("transaction nonode", txn_noauth)
    step("get /t", lambda: zk.get("/t"))

    # Watches: data, child, exists-created, delete; event order.
    ev = Events()
    step("exists /w watch", lambda: zk.exists("/w", watch=ev.watcher("exists")))
    step("create /w", lambda: zk.create("/w", b"0"))
    ev.wait(1)
    step("get /w watch", lambda: zk.get("/w", watch=ev.watcher("data")))
    step("exists /w watch", lambda: zk.exists("/w", watch=ev.watcher("exists")))
    step("get_children /w watch", lambda: zk.get_children("/w", watch=ev.watcher("child")))
    step("set /w", lambda: zk.set("/w", b"1"))
    ev.wait(3)
    with ev.cond:
        # One server event, two kazoo watchers (get and exists share it):
        # kazoo calls them in the order of a Python set, which varies by run.
        ev.events[1:3] = sorted(ev.events[1:3])
    step("create /w/kid", lambda: zk.create("/w/kid", b""))
    ev.wait(4)
    step("get /w watch", lambda: zk.get("/w", watch=ev.watcher("data")))
    step("get_children /w watch", lambda: zk.get_children("/w", watch=ev.watcher("child")))
    step("delete /w recursive", lambda: zk.delete("/w", recursive=True))
    ev.wait(6)
    ev.dump()

    # Sync.
    step("sync /t", lambda: zk.sync("/t"))

    # Containers and TTL nodes are reaped by the container manager.
    step("create /cont/kid", lambda: zk.create("/cont/kid", b""))
    step("exists /cont watch", lambda: zk.exists("/cont", watch=ev.watcher("exists")))
    step("delete /cont/kid", lambda: zk.delete("/cont/kid"))
    ev.wait(1)
    ev.dump()
    step("exists /cont", lambda: zk.exists("/cont"))
    step("createTTL /short ttl=200", lambda: call(zk, CreateTTL("/short", b"", OPEN_ACL_UNSAFE, 5, 200)))
    step("exists /short watch", lambda: zk.exists("/short", watch=ev.watcher("exists")))
    ev.wait(1)
    ev.dump()

    # Ephemerals disappear when their session closes.
    owner = connect(hosts)
    out("owner session=%s" % hex(owner.client_id[0]))
    step("owner create /e ephemeral", lambda: owner.create("/e", b"", ephemeral=True))
    step("owner create /a/ekid- ephemeral sequence", lambda: owner.create("/a/ekid-", b"", ephemeral=True, sequence=True))
    step("exists /e watch", lambda: zk.exists("/e", watch=ev.watcher("exists")))
    step("get_children /a watch", lambda: sorted(zk.get_children("/a", watch=ev.watcher("child"))))
    owner.stop()
    owner.close()
    ev.wait(2)
    with ev.cond:
        ev.events.sort()  # two watches fire for one close; their order is not specified
    ev.dump()
    step("exists /e", lambda: zk.exists("/e"))
    step("get_children /a", lambda: sorted(zk.get_children("/a")))

    zk.stop()
    zk.close()
    out("done")


if __name__ == "__main__":
    main()
