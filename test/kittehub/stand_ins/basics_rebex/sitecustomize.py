"""For the kittehub harness only (devops/sftp): the public SFTP test server its code names,
`test.rebex.net:22`, played on loopback, because this machine has no internet and no SFTP server.

Imported by Python at start (it is on the sessions' PYTHONPATH): `socket.getaddrinfo` and
`socket.socket.connect` send `test.rebex.net` to a paramiko SFTP server it starts on 127.0.0.1
(a free port) the first time, as a hosts-file entry would; every other name is left alone. The
server takes the user `demo` with password `password` (Rebex's demo account) and serves one
file, `/readme.txt`.
Never shipped.
"""

import os
import socket
import tempfile
import threading

HOST = "test.rebex.net"
README = b"Welcome to the kittehub stand-in of test.rebex.net.\nThis is a readme file with spaces in it.\n"

_real_getaddrinfo = socket.getaddrinfo
_lock = threading.Lock()
_port = None


def _serve_one(sock, key):
    import paramiko

    class Server(paramiko.ServerInterface):
        def get_allowed_auths(self, username):
            return "password"

        def check_auth_password(self, username, password):
            ok = (username, password) == ("demo", "password")
            return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

        def check_channel_request(self, kind, chanid):
            return (
                paramiko.OPEN_SUCCEEDED
                if kind == "session"
                else paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED
            )

    class Files(paramiko.SFTPServerInterface):
        def _local(self, path):
            if path.rstrip("/").split("/")[-1] != "readme.txt":
                return None
            f = tempfile.NamedTemporaryFile(delete=False)
            f.write(README)
            f.close()
            return f.name

        def stat(self, path):
            local = self._local(path)
            if local is None:
                return paramiko.SFTP_NO_SUCH_FILE
            return paramiko.SFTPAttributes.from_stat(os.stat(local))

        lstat = stat

        def open(self, path, flags, attr):
            local = self._local(path)
            if local is None:
                return paramiko.SFTP_NO_SUCH_FILE
            handle = paramiko.SFTPHandle(flags)
            handle.readfile = open(local, "rb")  # noqa: SIM115 (the handle closes it)
            return handle

    transport = paramiko.Transport(sock)
    transport.add_server_key(key)
    transport.set_subsystem_handler("sftp", paramiko.SFTPServer, Files)
    transport.start_server(server=Server())


def _start():
    global _port
    with _lock:
        if _port is None:
            import paramiko

            key = paramiko.RSAKey.generate(2048)
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(5)

            def accept():
                while True:
                    conn, _ = listener.accept()
                    _serve_one(conn, key)

            threading.Thread(target=accept, name="stand-in test.rebex.net", daemon=True).start()
            _port = listener.getsockname()[1]
    return _port


def _getaddrinfo(host, port, *args, **kwargs):
    if host == HOST:
        return _real_getaddrinfo("127.0.0.1", _start(), *args, **kwargs)
    return _real_getaddrinfo(host, port, *args, **kwargs)


_real_connect = socket.socket.connect


def _connect(self, address):
    # paramiko resolves the name, then connects to the name again: both lead here.
    if isinstance(address, tuple) and address and address[0] == HOST:
        address = ("127.0.0.1", _start())
    return _real_connect(self, address)


socket.getaddrinfo = _getaddrinfo
socket.socket.connect = _connect
