"""Transcript helpers shared by the kazoo scripts of Warden's compatibility tier.

A script prints one line per step, "step -> result" or "step err=ExceptionClass", so
that the same script run against ZooKeeper and against Warden gives transcripts the Go
test compares. Scripts import this module after putting this directory on sys.path:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
    from transcript import out, step
"""


def out(*parts):
    print(" ".join(str(p) for p in parts), flush=True)


def acl_line(acls):
    return "[" + ",".join("%s:%s:%d" % (a.id.scheme, a.id.id, a.perms) for a in acls) + "]"


def fmt(res):
    """Formats a kazoo result: (acls, stat), (data, stat), a stat, or anything else."""
    if isinstance(res, tuple) and len(res) == 2 and isinstance(res[0], list):
        return "%s version=%d" % (acl_line(res[0]), res[1].version)
    if isinstance(res, tuple) and len(res) == 2 and isinstance(res[0], bytes):
        return "data=%r version=%d" % (res[0], res[1].version)
    if hasattr(res, "czxid"):
        return "version=%d aversion=%d dataLength=%d" % (res.version, res.aversion, res.dataLength)
    return repr(res)


def step(name, fn, messages=False):
    """Runs fn and prints name with its result or the exception's class name (and its
    message too when messages is set). Time-outs and client-side errors belong in the
    transcript as much as server errors."""
    try:
        res = fn()
    except Exception as e:
        out(name, "err=%s(%s)" % (type(e).__name__, e) if messages else "err=" + type(e).__name__)
        return None
    out(name, "-> " + (repr(res) if messages else fmt(res)))
    return res
