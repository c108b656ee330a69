"""Kazoo enforced-authentication scenario of Warden's compatibility tier
(test/compat/security_test.go).

Usage: /usr/bin/python3 kazoo_enforce.py HOST:PORT digest|sasl

The server requires authentication: digest (enforce.auth.schemes=digest) or sasl
(sessionRequireClientSASLAuth=true with the DIGEST-MD5 user bob/bobsecret). A client
without credentials gets a session, and its first request is answered -124
(SESSIONCLOSEDREQUIRESASLAUTH, a code kazoo 2.8 does not know) and the connection closed;
a client with credentials (auth_data or sasl_options) works.

Prints one line per step, "step -> result" or "step err=ExceptionClass". Every wait is
bounded (WAIT seconds); a timeout prints "timeout ..." and exits non-zero.
"""

import logging
import os
import sys
import threading

from kazoo.client import KazooClient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from transcript import out, step as transcript_step  # noqa: E402

WAIT = 20.0


def step(name, fn):
    """A transcript step with the exception's message too: kazoo reports -124 as a
    RuntimeError whose message tells the codes apart."""
    return transcript_step(name, fn, messages=True)


class Warnings(logging.Handler):
    """Collects kazoo's warnings (dropped connections, failed authentication) and
    exceptions logged by its connection thread, by their first line."""

    def __init__(self):
        logging.Handler.__init__(self, logging.WARNING)
        self.cond = threading.Condition()
        self.lines = []

    def emit(self, record):
        with self.cond:
            self.lines.append("%s %s" % (record.levelname, record.getMessage().splitlines()[0]))
            self.cond.notify_all()

    def wait_first(self):
        with self.cond:
            if not self.cond.wait_for(lambda: self.lines, timeout=WAIT):
                return None
            return self.lines[0]

    def take(self):
        with self.cond:
            lines, self.lines = self.lines, []
            return lines


def credentials(mode):
    if mode == "digest":
        return {"auth_data": [("digest", "u:p")]}
    return {"sasl_options": {"mechanism": "DIGEST-MD5", "username": "bob", "password": "bobsecret"}}


def main():
    hosts, mode = sys.argv[1], sys.argv[2]
    logging.basicConfig(level=logging.CRITICAL)
    warnings = Warnings()
    logging.getLogger("kazoo").addHandler(warnings)
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    logging.getLogger("kazoo").propagate = False

    # Without credentials: a session, then -124 for the first request.
    anon = KazooClient(hosts=hosts, timeout=WAIT)
    anon.start(timeout=WAIT)
    out("anon connected=%s" % anon.connected)
    # kazoo 2.8 maps reply codes through a table without -124: reading that reply raises
    # in its connection thread, which logs the error and dies, and the request is never
    # answered. Once the first warning is logged the reply has been read, so whether the
    # request was answered is settled.
    get = anon.get_async("/")
    first = warnings.wait_first()
    if first is None:
        out("timeout: no warning from kazoo within %ss" % WAIT)
        sys.exit(2)
    out("anon first warning:", first)
    out("anon get / answered=%s" % get.ready())
    anon.stop()
    anon.close()
    warnings.take()

    # With credentials.
    authed = KazooClient(hosts=hosts, timeout=WAIT, **credentials(mode))
    authed.start(timeout=WAIT)
    step("authed create", lambda: authed.create("/kazoo-enforced", b"k"))
    step("authed get", lambda: authed.get("/kazoo-enforced")[0])
    step("authed children", lambda: sorted(authed.get_children("/")))
    authed.stop()
    authed.close()
    out("authed warnings=%r" % warnings.take())


if __name__ == "__main__":
    main()
