"""A kazoo client driven line by line, for test/compat/ensemble_clients_test.go.

Usage: /usr/bin/python3 agent.py

One command per line on stdin; each gets exactly one reply line on stdout, "ok ..." or
"error <exception>". Watch and session-state notifications are printed asynchronously
as "event ..." lines.

  connect <hosts> <session-timeout-s>  start a client that tries hosts in the given order
                                       (randomize_hosts=False) and retries forever;
                                       replies "ok session=0x..."
  session                              "ok session=0x... state=<kazoo state>"
  create <path> <data> [ephemeral]     "ok <created path>" or "ok err=<kazoo exception>"
  set <path> <data>                    "ok version=<n>" or "ok err=..."
  get <path>                           "ok data=<data> version=<n>" or "ok err=..."
  exists <path>                        "ok exists=True|False"
  sync <path>                          "ok"
  children <path>                      "ok children=<sorted, comma-separated>"
  watch_exists <path>                  exists() with a one-shot watch; "ok exists=..."
  watch_data <path>                    get() with a one-shot watch; "ok data=..."
  watch_children <path>                get_children() with a one-shot watch; "ok ..."
  stop                                 close the session; "ok"
  quit                                 "ok bye", then exit

Events: "event state <LOST|SUSPENDED|CONNECTED>" for every state change kazoo reports,
"event watch <kind> <EVENT_TYPE> <path>" when a watch fires (kind: exists, data,
children). Nothing is retried: the test issues commands only while CONNECTED.
"""

import sys
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException

lock = threading.Lock()
client = None


def out(line):
    with lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def on_state(state):
    out("event state %s" % state)


def watcher(kind):
    def fire(ev):
        out("event watch %s %s %s" % (kind, ev.type, ev.path))
    return fire


def session():
    return "0x%x" % client.client_id[0]


def run(f):
    cmd, args = f[0], f[1:]
    global client
    if cmd == "connect":
        client = KazooClient(hosts=args[0], timeout=float(args[1]), randomize_hosts=False,
                             connection_retry={"max_tries": -1, "delay": 0.05, "backoff": 1.5,
                                               "max_delay": 0.5})
        client.add_listener(on_state)
        client.start(timeout=15)
        return "session=%s" % session()
    if cmd == "session":
        return "session=%s state=%s" % (session(), client.state)
    try:
        if cmd == "create":
            return client.create(args[0], args[1].encode(), ephemeral=len(args) > 2 and args[2] == "ephemeral")
        if cmd == "set":
            return "version=%d" % client.set(args[0], args[1].encode()).version
        if cmd == "get":
            data, st = client.get(args[0])
            return "data=%s version=%d" % (data.decode(), st.version)
        if cmd == "exists":
            return "exists=%s" % (client.exists(args[0]) is not None)
        if cmd == "sync":
            client.sync(args[0])
            return ""
        if cmd == "children":
            return "children=%s" % ",".join(sorted(client.get_children(args[0])))
        if cmd == "watch_exists":
            return "exists=%s" % (client.exists(args[0], watch=watcher("exists")) is not None)
        if cmd == "watch_data":
            data, _ = client.get(args[0], watch=watcher("data"))
            return "data=%s" % data.decode()
        if cmd == "watch_children":
            return "children=%s" % ",".join(sorted(client.get_children(args[0], watch=watcher("children"))))
    except KazooException as e:
        return "err=%s" % type(e).__name__
    if cmd == "stop":
        client.stop()
        client.close()
        return ""
    raise ValueError("unknown command %r" % cmd)


def main():
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "quit":
            out("ok bye")
            break
        try:
            reply = run(f)
            out(("ok " + reply).rstrip())
        except Exception as e:  # reported to the test, which fails
            out("error %s: %s" % (type(e).__name__, e))
    if client is not None:
        try:
            client.stop()
            client.close()
        except Exception:
            pass


if __name__ == "__main__":
    main()
