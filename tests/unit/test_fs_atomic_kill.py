"""SIGKILL at random points never leaves a torn file: it is wholly the old or the new content,
and the temporary file of a killed write is gone after the next start.

Each trial starts a writer process that alternates two 50 MB payloads through ``atomic_write``
and kills it after a random delay. The writer loads ``agent_ext/fs/atomic.py`` by file path
with ``python -I -S`` so a trial costs milliseconds; that works because the module imports
only the standard library.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_ext.fs import atomic

TRIALS = 200
MAX_DELAY_S = 0.25
MIB = 1024 * 1024
PAYLOAD_A = b"A" * 1023 + b"\n"
PAYLOAD_B = bytes(range(256))

WRITER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("atomic_under_test", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
a = b"A" * 1023 + b"\\n"
b = bytes(range(256))
contents = (a * 50 * 1024, b * 50 * 4096)  # 50 MiB each
sys.stdout.write("ready\\n")
sys.stdout.flush()
i = 0
while True:
    mod.atomic_write(sys.argv[2], contents[i % 2])
    i += 1
"""


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_never_leaves_a_torn_file(tmp_path: Path) -> None:
    content_a, content_b = PAYLOAD_A * 50 * 1024, PAYLOAD_B * 50 * 4096
    digests = {hashlib.sha256(content_a).hexdigest(): "a",
               hashlib.sha256(content_b).hexdigest(): "b"}
    target = tmp_path / "data.bin"
    target.write_bytes(content_a)
    module_path = str(Path(atomic.__file__).resolve())
    rng = random.Random(20240607)
    seen = {"a": 0, "b": 0}
    killed_mid_write = 0
    started = time.monotonic()
    for trial in range(TRIALS):
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", WRITER, module_path,
                                 str(target)], stdout=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0, MAX_DELAY_S))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()

        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        assert digest in digests, f"trial {trial}: the file is neither the old nor the new content"
        seen[digests[digest]] += 1
        strays = sorted(n for n in os.listdir(tmp_path) if n != target.name)
        assert all(atomic.is_temp_name(n) for n in strays), f"trial {trial}: {strays}"
        removed = atomic.sweep_interrupted()  # what the next start does
        assert sorted(p.name for p in removed if p.parent == tmp_path) == strays
        assert os.listdir(tmp_path) == [target.name]
        killed_mid_write += bool(strays)
    elapsed = time.monotonic() - started
    print(f"\nkill test: {TRIALS} trials in {elapsed:.1f}s; final content a={seen['a']} "
          f"b={seen['b']}; killed with a temp file on disk: {killed_mid_write}")
    assert seen["a"] and seen["b"], "the writer never got a write in: the test proves nothing"
    assert killed_mid_write, "no kill landed mid-write: the test proves nothing"
