"""What a served read costs `receipt serve`'s process under load, beyond its answer."""
import re
import shutil
import subprocess

from test_notifications import ORIGINAL, news_ca, mint_jws, now, post, story, store_server  # noqa: F401 (fixtures)
from test_serve import READ_TOKEN


def minor_faults(pid):
    """The process's minor page faults so far (/proc/PID/stat, field 10)."""
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[7])


def test_reads_under_load_do_not_fault_their_memory_in_again(tmp_path, news_ca, test_ca, story):
    """Under 64 connections of reads, glibc gave the memory a read freed at the top of an event
    loop's heap back to the kernel, and the next read faulted it in: 0.8-1.4 page faults a read.
    The server keeps up to 4 MB free a heap (ServerAllocator), so a read faults nothing in."""
    assert shutil.which("wrk"), "wrk is missing: scripts/install-deps.sh test installs it"
    server = store_server(tmp_path, news_ca, test_ca)
    try:
        for _, _, body in story:
            assert post(server, body)[0] == 200
        command = ["wrk", "-t2", "-c64", "-d2s", "-H", f"Authorization: Bearer {READ_TOKEN}",
                   f"http://127.0.0.1:{server.port}/v1/subscriptions/{ORIGINAL}"]
        subprocess.run(command, capture_output=True, check=True)  # the heaps grown to their working size
        before = minor_faults(server.process.pid)
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        faults = minor_faults(server.process.pid) - before
    finally:
        assert server.stop() == 0
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    assert "Non-2xx" not in out, out
    assert requests > 1000, out
    assert faults / requests < 0.05, (faults, requests)
