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
    """A cluster's postgres:// URL; stop() stops the server early (the tests of a store gone away);
    ca, with tls=True, the file of the CA that signed the server's certificate."""
    stop = None
    ca = None


def make_certificates(top):
    """A test CA and a server certificate it signs, for localhost and 127.0.0.1 (openssl)."""
    def openssl(*arguments):
        subprocess.run(["openssl", *arguments], check=True, capture_output=True, cwd=top)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=receipt test CA", "-keyout", "ca.key", "-out", "ca.crt")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost",
            "-keyout", "server.key", "-out", "server.csr")
    with open(os.path.join(top, "san.ext"), "w") as extensions:
        extensions.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-extfile", "san.ext", "-out", "server.crt")
    os.chmod(os.path.join(top, "server.key"), 0o600)
    if os.geteuid() == 0:
        shutil.chown(os.path.join(top, "server.key"), pwd.getpwnam("postgres").pw_uid)


@contextlib.contextmanager
def cluster(database="receipt", tls=False):
    """Yields a postgres:// URL (a URL) of an empty database in a new cluster. With tls, the
    server speaks TLS with a certificate of a test CA (URL.ca) and takes TCP connections only
    over TLS (pg_hba hostssl)."""
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
        options = f"-p {port} -k {top} -c listen_addresses=127.0.0.1 -c fsync=on"
        if tls:
            make_certificates(top)
            options += f" -c ssl=on -c ssl_cert_file={top}/server.crt -c ssl_key_file={top}/server.key"
            hba = os.path.join(data, "pg_hba.conf")
            with open(hba, "w") as rules:
                rules.write("local all all trust\nhostssl all all 127.0.0.1/32 trust\nhost all all 0.0.0.0/0 reject\n")
            if os.geteuid() == 0:
                shutil.chown(hba, pwd.getpwnam("postgres").pw_uid)
        run(f"{binaries}/pg_ctl", "-D", data, "-w", "-l", os.path.join(top, "server.log"), "-o", options, "start")
        stopped = []

        def stop():
            if not stopped:
                stopped.append(True)
                run(f"{binaries}/pg_ctl", "-D", data, "-m", "immediate", "stop")

        try:
            run(f"{binaries}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "receipt", database)
            url = URL(f"postgres://receipt@127.0.0.1:{port}/{database}")
            url.stop = stop
            url.ca = os.path.join(top, "ca.crt") if tls else None
            yield url
        finally:
            stop()
    finally:
        shutil.rmtree(top, ignore_errors=True)
