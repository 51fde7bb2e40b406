"""A throwaway PostgreSQL cluster for the tests and benches: Debian's server binaries,
a data directory in a new temporary directory, listening on a free loopback port,
trusting local connections. Stopped (immediately) and deleted when done.

Run as root (CI), the server runs as Debian's `postgres` user, as PostgreSQL requires.
"""
import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile


def server_binaries():
    """The newest installed PostgreSQL's bin directory, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return os.path.dirname(found[-1]) if found else None


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class URL(str):
    """A cluster's postgres:// URL; stop() stops the server early (the tests of a store gone away)."""
    stop = None


@contextlib.contextmanager
def cluster(database="receipt"):
    """Yields a postgres:// URL (a URL) of an empty database in a new cluster."""
    binaries = server_binaries()
    if binaries is None:
        raise RuntimeError("PostgreSQL's server is not installed (scripts/install-deps.sh test installs Debian's postgresql)")
    top = tempfile.mkdtemp(prefix="receipt-pg-")
    as_user = []
    if os.geteuid() == 0:
        os.chmod(top, 0o755)
        shutil.chown(top, pwd.getpwnam("postgres").pw_uid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = os.path.join(top, "data"), free_port()

    def run(*command):
        subprocess.run(as_user + list(command), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=top)

    try:
        run(f"{binaries}/initdb", "-D", data, "-A", "trust", "-U", "receipt", "--no-sync")
        run(f"{binaries}/pg_ctl", "-D", data, "-w", "-l", os.path.join(top, "server.log"), "-o",
            f"-p {port} -k {top} -c listen_addresses=127.0.0.1 -c fsync=on", "start")
        stopped = []

        def stop():
            if not stopped:
                stopped.append(True)
                run(f"{binaries}/pg_ctl", "-D", data, "-m", "immediate", "stop")

        try:
            run(f"{binaries}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "receipt", database)
            url = URL(f"postgres://receipt@127.0.0.1:{port}/{database}")
            url.stop = stop
            yield url
        finally:
            stop()
    finally:
        shutil.rmtree(top, ignore_errors=True)
