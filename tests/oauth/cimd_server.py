"""A client ID metadata document served over https on 127.0.0.1, with a test CA the fetcher trusts.

The fetcher verifies TLS with the default trust store; ``SSL_CERT_FILE`` (read by OpenSSL when a
context loads its default paths) points it at this CA for the test, so production code needs no
test switch beyond allowing loopback.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """(CA file, leaf certificate, leaf key) for IP 127.0.0.1, valid for a day."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("h9oauth test CA"))
        .issuer_name(_name("h9oauth test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return ca_file, cert_file, key_file


class DocumentServer:
    """Serves JSON documents by path; counts the requests it answered."""

    def __init__(self, folder: Path):
        self.documents: dict[str, bytes] = {}
        self.drips: dict[str, float] = {}  # path -> seconds between the bytes of its body
        self.requests: list[str] = []
        self.stop = threading.Event()
        self.ca_file, cert, key = make_certificates(folder)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                server.requests.append(self.path)
                body = server.documents.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                interval = server.drips.get(self.path)
                if interval is None:
                    self.wfile.write(body)
                    return
                for byte in body:  # a slow server: one byte at a time, until the client gives up
                    if server.stop.wait(interval):
                        return
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:
                        return

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.base = f"https://127.0.0.1:{self.httpd.server_address[1]}"

    def publish(self, path: str, document: dict | bytes) -> str:
        """Serve ``document`` at ``path``; its URL (a client_id)."""
        self.documents[path] = document if isinstance(document, bytes) else json.dumps(document).encode()
        return self.base + path

    def client_document(self, path: str, redirect_uris: list[str], **extra) -> str:
        url = self.base + path
        return self.publish(
            path,
            {
                "client_id": url,
                "client_name": "Metadata document client",
                "redirect_uris": redirect_uris,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                **extra,
            },
        )


@contextmanager
def document_server(folder: Path):
    server = DocumentServer(folder)
    thread = threading.Thread(target=server.httpd.serve_forever, name="cimd-server", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(timeout=10)
