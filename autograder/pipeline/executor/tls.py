"""Who may talk to the grading cluster: only a holder of its TLS credentials.

A Dask scheduler runs whatever a client that reaches its port asks (``Client.run``, a task,
``run_on_scheduler``): code on every worker with the workers' rights, code in the scheduler's
own process, results the grader would merge into the gradebook. Plain ``tcp://`` asks no one
who they are, so the grader does not use it unless the instructor insists:

- the local cluster gets credentials made for its run (``Security.temporary()``: a key and a
  self-signed certificate held in the grader's memory and handed to its own workers);
- an existing cluster is reached at a ``tls://`` address with the instructor's files
  (``TLSFiles``: ``--tls-ca-file``, ``--tls-cert``, ``--tls-key``, or Dask's own
  ``distributed.comm.tls.*`` settings), the files its scheduler and workers were started with;
- any other address is refused, unless ``--insecure`` says no one else can reach it.
"""
from __future__ import annotations

import os
import ssl
import stat
from dataclasses import astuple, dataclass
from pathlib import Path

import dask
from distributed.comm.addressing import parse_address
from distributed.security import Security

ENCRYPTED = ("tls", "wss")   # Dask's schemes that present and check certificates
OPTIONS = ("--tls-ca-file", "--tls-cert", "--tls-key")   # as ``dask scheduler`` names them
REFUSED = ("refusing to grade on {address}: a Dask scheduler without TLS lets anyone who reaches "
           "its port run code on its workers and change the grades they return. To grade there, "
           "start its scheduler and workers with --tls-ca-file, --tls-cert and --tls-key and give "
           "the grader tls://HOST:PORT and the same three files (docs/deploying.md, 'An "
           "existing cluster over TLS'), or pass --insecure if no one else can reach that port")
INSECURE = ("WARNING: grading on {address} without TLS (--insecure): anyone who can reach that "
            "port can run code on the workers and change the grades they return")


class TLSError(ValueError):
    """The cluster's address or certificate files would let others in, or cannot be used."""


@dataclass(frozen=True)
class TLSFiles:
    """The PEM files the grader presents to a ``tls://`` scheduler: the certificate authority
    that signed the cluster's certificates, the grader's certificate and its private key."""

    ca_file: Path
    cert: Path
    key: Path

    @classmethod
    def given(cls, ca_file: Path | None, cert: Path | None, key: Path | None) -> TLSFiles | None:
        """The files of ``--tls-ca-file``, ``--tls-cert`` and ``--tls-key``: all three or none."""
        missing = [option for option, path in zip(OPTIONS, (ca_file, cert, key)) if path is None]
        if len(missing) == len(OPTIONS):
            return None
        if missing:
            raise TLSError(f"{', '.join(OPTIONS[:-1])} and {OPTIONS[-1]} go together; missing "
                           + ", ".join(missing))
        return cls(ca_file, cert, key)

    @classmethod
    def configured(cls) -> TLSFiles | None:
        """The client's files from Dask's configuration (``distributed.comm.tls.ca-file``,
        ``.client.cert``, ``.client.key``), if all three are set."""
        found = [dask.config.get(f"distributed.comm.tls.{name}", None)
                 for name in ("ca-file", "client.cert", "client.key")]
        return cls(*(Path(path).expanduser() for path in found)) if all(found) else None

    def security(self) -> Security:
        """Dask's ``Security`` for these files, once each can be read, the key by no one else,
        and they make a TLS context."""
        for option, path in zip(OPTIONS, astuple(self)):
            if not os.access(path, os.R_OK) or not path.is_file():
                raise TLSError(f"{option} {path}: no such file, or it cannot be read")
        if stat.S_IMODE(self.key.stat().st_mode) & 0o077:
            raise TLSError(f"--tls-key {self.key} can be read by other users, and whoever reads "
                           f"it can run code on the cluster: chmod 600 {self.key}")
        security = Security(require_encryption=True, tls_ca_file=str(self.ca_file),
                            tls_client_cert=str(self.cert), tls_client_key=str(self.key))
        try:
            security.get_connection_args("client")
        except ssl.SSLError as error:
            raise TLSError(f"{', '.join(map(str, astuple(self)))} are not a certificate "
                           f"authority, a certificate and its key in PEM ({error})") from error
        return security


def local() -> Security:
    """Credentials for one run of the local cluster, known only to the grader's process."""
    return Security.temporary()


def for_scheduler(address: str, files: TLSFiles | None, insecure: bool) -> Security | None:
    """How the grader talks to the scheduler at ``address``: TLS with ``files`` (or Dask's
    configured ones) for a ``tls://`` address; in the clear (``None``) only if ``insecure``."""
    scheme, _ = parse_address(address)
    if scheme not in ENCRYPTED:
        if files is not None:
            raise TLSError(f"--tls-* files were given but {address} is not a tls:// address; a "
                           "scheduler started with them listens at tls://HOST:PORT")
        if not insecure:
            raise TLSError(REFUSED.format(address=address))
        return None
    files = files or TLSFiles.configured()
    if files is None:
        raise TLSError(f"{address} needs the cluster's certificate files: --tls-ca-file, "
                       "--tls-cert and --tls-key (or Dask's distributed.comm.tls.ca-file, "
                       ".client.cert and .client.key)")
    return files.security()
