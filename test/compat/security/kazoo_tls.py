"""Kazoo TLS scenario of Warden's compatibility tier (test/compat/security_test.go).

Usage: /usr/bin/python3 kazoo_tls.py HOST:SECUREPORT PKIDIR ALICE_DN

PKIDIR holds ca.pem and NAME.pem / NAME.key for alice, bob and mallory (mallory's issued
by a CA the server does not trust); ALICE_DN is alice's subject as the server's x509
provider names it. The server requires client certificates (ssl.clientAuth=need).

Prints one line per step, "step -> result" or "step err=ExceptionClass". Every wait is
bounded (WAIT seconds); a timeout prints "timeout ..." and exits non-zero.
"""

import logging
import os
import sys
import threading

from kazoo.client import KazooClient
from kazoo.protocol.serialization import int_struct, read_string
from kazoo.security import make_acl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from transcript import out, step  # noqa: E402

WAIT = 20.0
NODE = "/kazoo-tls"


class WhoAmI(object):
    """ZooKeeper's whoAmI request (opcode 107, ZooKeeper 3.7+), which kazoo 2.8 lacks:
    an empty body; the reply is a vector of ClientInfo {string authScheme; string user}."""

    type = 107

    def serialize(self):
        return bytearray()

    @classmethod
    def deserialize(cls, buf, offset):
        count = int_struct.unpack_from(buf, offset)[0]
        offset += int_struct.size
        infos = []
        for _ in range(max(count, 0)):
            scheme, offset = read_string(buf, offset)
            user, offset = read_string(buf, offset)
            infos.append("%s:%s" % (scheme, user))
        return sorted(infos)


def whoami(zk):
    result = zk.handler.async_result()
    zk._call(WhoAmI(), result)
    return result.get(timeout=WAIT)


class Drops(logging.Handler):
    """Collects kazoo's "Connection dropped: <reason>" warnings; wait_first blocks until
    one arrives."""

    def __init__(self):
        logging.Handler.__init__(self, logging.WARNING)
        self.cond = threading.Condition()
        self.reasons = []

    def emit(self, record):
        msg = record.getMessage()
        if msg.startswith("Connection dropped:"):
            with self.cond:
                self.reasons.append(msg)
                self.cond.notify_all()

    def wait_first(self):
        with self.cond:
            if not self.cond.wait_for(lambda: self.reasons, timeout=WAIT):
                return None
            return self.reasons[0]

    def clear(self):
        with self.cond:
            self.reasons = []


def tls_client(hosts, pki, name):
    kw = {}
    if name:
        kw = {"certfile": os.path.join(pki, name + ".pem"), "keyfile": os.path.join(pki, name + ".key")}
    return KazooClient(hosts=hosts, timeout=WAIT, use_ssl=True, verify_certs=True,
                       ca=os.path.join(pki, "ca.pem"), **kw)


def refused(name, zk, drops):
    """Starts zk, which the server must refuse, and prints the first reason kazoo gives
    for the dropped connection and whether a session came up."""
    drops.clear()
    zk.start_async()
    reason = drops.wait_first()
    if reason is None:
        out("timeout %s: no dropped connection within %ss" % (name, WAIT))
        sys.exit(2)
    out(name, "connected=%s" % zk.connected, "reason=" + reason)
    zk.stop()
    zk.close()


def main():
    hosts, pki, alice_dn = sys.argv[1], sys.argv[2], sys.argv[3]
    logging.basicConfig(level=logging.CRITICAL)
    drops = Drops()
    logging.getLogger("kazoo").addHandler(drops)
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    logging.getLogger("kazoo").propagate = False

    alice = tls_client(hosts, pki, "alice")
    alice.start(timeout=WAIT)
    step("alice whoami", lambda: whoami(alice))
    alice_acl = [make_acl("x509", alice_dn, all=True)]
    step("alice create", lambda: alice.create(NODE, b"from-kazoo", acl=alice_acl))
    step("alice get", lambda: alice.get(NODE))
    step("alice get_acls", lambda: alice.get_acls(NODE))
    step("alice set", lambda: alice.set(NODE, b"again"))
    step("alice create child", lambda: alice.create(NODE + "/child", b"c"))

    bob = tls_client(hosts, pki, "bob")
    bob.start(timeout=WAIT)
    step("bob whoami", lambda: whoami(bob))
    step("bob get", lambda: bob.get(NODE))
    step("bob get_children", lambda: bob.get_children(NODE))
    step("bob create child", lambda: bob.create(NODE + "/bob", b"b"))
    step("bob get child", lambda: bob.get(NODE + "/child"))
    bob.stop()
    bob.close()

    refused("nocert", tls_client(hosts, pki, None), drops)
    refused("mallory", tls_client(hosts, pki, "mallory"), drops)
    refused("plaintext", KazooClient(hosts=hosts, timeout=WAIT), drops)

    step("alice get after refusals", lambda: alice.get(NODE))
    alice.stop()
    alice.close()


if __name__ == "__main__":
    main()
