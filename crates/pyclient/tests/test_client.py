"""argus_client end to end: a local open-iris deployment (``argus setup --layout open-iris``, the
three ``argus node`` processes), fed templates that open-iris 1.11 serialized itself (the fixture
of ``crates/iris/tests/open_iris.rs``) through a stand-in for its ``IrisTemplate``.

Run: ``python crates/pyclient/tests/test_client.py`` with ``argus_client`` installed and the
``argus`` binary built (``$ARGUS_BIN``, else ``$CARGO_TARGET_DIR/release/argus``, else
``target/release/argus``). Needs only the standard library.
"""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import argus_client

REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "crates" / "iris" / "tests" / "data" / "open-iris-decisions.json"


def argus_exe() -> str:
    if os.environ.get("ARGUS_BIN"):
        return os.environ["ARGUS_BIN"]
    target = REPO / os.environ.get("CARGO_TARGET_DIR", "target")  # a relative target is the repo's
    exe = target / "release" / "argus"
    if not exe.is_file():
        raise RuntimeError(f"no argus binary at {exe}: build it (cargo build --release -p argus) or set ARGUS_BIN")
    return str(exe)


class IrisTemplate:
    """Stands in for open-iris's ``IrisTemplate``: the client only calls ``serialize()``."""

    def __init__(self, serialized: dict):
        self._serialized = serialized

    def serialize(self) -> dict:
        return dict(self._serialized)


def eyes(entry: dict):
    """A fixture entry's two eyes as IrisTemplate stand-ins."""
    return IrisTemplate(entry["left"]), IrisTemplate(entry["right"])


class OpenIrisDeployment(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp(prefix="argus-pyclient-"))
        cls.nodes = []
        cls.addClassCleanup(cls.stop)
        subprocess.run(
            [argus_exe(), "setup", "--dir", str(cls.dir), "--layout", "open-iris"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        for i in range(3):
            log = open(cls.dir / f"node{i}.log", "wb")
            cls.nodes.append(
                subprocess.Popen(
                    [argus_exe(), "node", "--config", str(cls.dir / f"party{i}.toml")],
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                )
            )
            log.close()  # the child has its own copy
        cls.wait_serving()
        cls.client = argus_client.Client(cls.dir / "client.toml")
        with open(FIXTURE) as f:
            cls.fixture = json.load(f)

    @classmethod
    def wait_serving(cls, within_s: float = 120):
        """Until `argus status` says the three nodes serve and agree (it exits 0)."""
        deadline = time.monotonic() + within_s
        status = [argus_exe(), "status", "--client", str(cls.dir / "client.toml")]
        while subprocess.run(status, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            for i, node in enumerate(cls.nodes):
                if node.poll() is not None:
                    raise RuntimeError(f"node {i} exited with {node.returncode}:\n{cls.log(i)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the nodes did not serve within {within_s} s")
            time.sleep(0.5)

    @classmethod
    def log(cls, i: int) -> str:
        return (cls.dir / f"node{i}.log").read_text(errors="replace")

    @classmethod
    def stop(cls):
        """Stops the nodes (also after a failure, then showing their logs) and removes the directory."""
        failed = any(node.poll() is not None for node in cls.nodes)
        for node in cls.nodes:
            node.terminate()
        for node in cls.nodes:
            try:
                node.wait(timeout=20)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()
        if failed or os.environ.get("ARGUS_PYCLIENT_LOGS"):
            for i in range(len(cls.nodes)):
                print(f"---- node {i} log ----\n{cls.log(i)}")
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_enrol_check_verify_and_refusals(self):
        enrolled, queries = self.fixture["enrolled"], self.fixture["queries"]
        # A genuine re-capture that open-iris matches with exactly one enrolled person.
        recapture = next(q for q in queries if q["kind"] == "genuine" and len(q["matches"]) == 1)
        person = enrolled[recapture["matches"][0]]
        other = enrolled[(recapture["matches"][0] + 1) % len(enrolled)]

        first = self.client.enroll(*eyes(person))
        self.assertTrue(first.unique, first)
        self.assertIsNotNone(first.enrolled, first)
        self.assertIn(f"enrolled={first.enrolled}", repr(first))

        # The same template again, and open-iris's re-capture of that person: not unique.
        again = self.client.check(*eyes(person))
        self.assertFalse(again.unique, again)
        self.assertIsNone(again.enrolled)
        self.assertNotEqual(again.request_id, first.request_id)
        self.assertFalse(self.client.check(*eyes(recapture)).unique)
        # Enrolling it again enrols nothing.
        self.assertEqual(self.client.enroll(*eyes(person)).enrolled, None)

        # Another person: unique, and not enrolled by a check. Each eye also as the dict
        # serialize() returns and as JSON text.
        new = self.client.check(other["left"], json.dumps(other["right"]))
        self.assertTrue(new.unique, new)
        self.assertIsNone(new.enrolled)
        self.assertTrue(self.client.check(*eyes(other)).unique)

        # Re-authentication, 1:1 with the enrolled identity.
        self.assertTrue(self.client.verify(*eyes(recapture), first.enrolled))
        self.assertFalse(self.client.verify(*eyes(other), first.enrolled))

    def test_bad_templates_raise_clear_exceptions(self):
        person = self.fixture["enrolled"][0]
        left, right = eyes(person)
        # Not JSON / not a template at all: refused before anything is sent.
        with self.assertRaisesRegex(argus_client.TemplateError, r"left eye .*JSON"):
            self.client.check("{not json", right)
        with self.assertRaisesRegex(argus_client.TemplateError, r"right eye: expected an open-iris IrisTemplate"):
            self.client.check(left, 42)
        # Another layout: 12800-bit codes (the deployed layout) on this 16384-bit deployment.
        short = dict(person["right"], iris_codes=base64.b64encode(bytes(1600)).decode())
        with self.assertRaisesRegex(argus_client.TemplateError, r"right eye .*16x256x2x2.*iris_codes.*1600 bytes"):
            self.client.enroll(left, short)
        # An eye whose mask hides every bit: the nodes refuse it (too few valid bits).
        masked = dict(person["left"], mask_codes=base64.b64encode(bytes(16384 // 8)).decode())
        with self.assertRaises(argus_client.RefusedError) as refused:
            self.client.enroll(masked, right)
        self.assertIn("fewer than 4096 valid", str(refused.exception))
        self.assertIsInstance(refused.exception, argus_client.ArgusError)

    def test_a_bad_configuration_raises(self):
        with self.assertRaisesRegex(argus_client.ArgusError, "no-such-client.toml"):
            argus_client.Client(self.dir / "no-such-client.toml")


if __name__ == "__main__":
    unittest.main(verbosity=2)
