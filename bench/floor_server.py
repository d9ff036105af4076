"""The Python floor: the sync handler's work (parse JSON, answer 201) behind a plain HTTP server.

    python floor_server.py threading   # http.server.ThreadingHTTPServer, HTTP/1.1 keep-alive
    python floor_server.py flask       # Flask's development server (threaded), if Flask imports

Listens on 127.0.0.1 on a free port, prints {"port": N} on one line, and exits when stdin closes.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def answer(raw):
    """The handler's logic, shared by both servers."""
    payload = json.loads(raw or b"null")
    return json.dumps({"ok": True, "n": payload.get("n") if isinstance(payload, dict) else None}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the second waits for the client's
    # delayed ACK (~40 ms a request on loopback), which would make the floor a straw man.
    disable_nagle_algorithm = True

    def do_POST(self):
        body = answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def threading_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def flask_server():
    import logging

    from flask import Flask, request
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = Flask("floor")

    @app.post("/")
    def root():
        return answer(request.get_data()), 201, {"Content-Type": "application/json"}

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_port


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else "threading"
    try:
        port = flask_server() if kind == "flask" else threading_server()
    except ImportError as e:
        print(json.dumps({"skipped": f"{e.name or 'flask'} not installed"}), flush=True)
        return
    print(json.dumps({"port": port}), flush=True)
    while os.read(0, 4096):
        pass


if __name__ == "__main__":
    main()
