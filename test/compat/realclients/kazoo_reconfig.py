"""Runs kazoo's own reconfig tests (kazoo.tests.test_client.TestReconfig, from Debian's
python3-kazoo) with unittest, under kazoo's own test harness (kazoo.testing), which
starts a 3-member ensemble with reconfigEnabled and a super digest by running "java ...
QuorumPeerMain zoo.cfg" (realclients_test.go puts zkshim.sh first on PATH as "java" to
start Warden instead).

Debian ships neither pytest nor mock for the python3 that sees kazoo; the tests use only
pytest.raises and pytest.skip, and mock is unittest.mock, so minimal stand-ins are
installed when the real modules are missing. Prints one "name ... ok|FAIL|ERROR|skipped"
line per test and exits non-zero unless every test passed (a skip is a failure too).
"""
import contextlib
import sys
import types
import unittest
import unittest.mock

try:
    import pytest  # noqa: F401
except ImportError:
    stub = types.ModuleType("pytest")

    @contextlib.contextmanager
    def raises(exc):
        try:
            yield
        except exc:
            return
        raise AssertionError("DID NOT RAISE %s" % exc.__name__)

    def skip(msg=""):
        raise unittest.SkipTest(msg)

    stub.raises, stub.skip = raises, skip
    sys.modules["pytest"] = stub
try:
    import mock  # noqa: F401
except ImportError:
    sys.modules["mock"] = unittest.mock

from kazoo.tests.test_client import TestReconfig  # noqa: E402

suite = unittest.defaultTestLoader.loadTestsFromTestCase(TestReconfig)
result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
sys.exit(0 if result.wasSuccessful() and not result.skipped and result.testsRun > 0 else 1)
