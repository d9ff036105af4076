"""A stand-in API server on loopback for the client helpers' tests: real HTTP, scripted answers.

>>> with StandIn({("GET", "/ping"): (200, {"ok": True})}) as api:
...     pass
"""

import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StandIn:
    """Answers `(method, path)` from `routes` (status, JSON body; a callable gets the server's base
    URL and the request), records every request in `requests` (headers case-insensitive); 404 for the rest."""

    def __init__(self, routes):
        self.routes = routes
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?")[0]
                outer.requests.append(
                    {"method": self.command, "path": self.path, "headers": self.headers, "body": body}
                )
                answer = outer.routes.get((self.command, path))
                if callable(answer):
                    answer = answer(outer.url, body)
                status, payload = answer if answer else (404, {"message": "Not Found"})
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


def service_account_key(token_uri):
    """A Google service account's JSON key with a fresh RSA key (made by `openssl`, so no test
    package's `cryptography` is imported twice), its tokens asked at `token_uri`."""
    pem = subprocess.run(
        ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    key = {
        "type": "service_account",
        "project_id": "p",
        "private_key_id": "k1",
        "private_key": pem,
        "client_email": "bot@p.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }
    return json.dumps(key)
