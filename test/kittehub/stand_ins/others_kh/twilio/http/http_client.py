"""TwilioHttpClient: one urllib request per call, form-encoded, with basic auth."""

import base64
import urllib.error
import urllib.parse
import urllib.request


class Response:
    def __init__(self, status_code, text):
        self.status_code, self.text = status_code, text


class TwilioHttpClient:
    def request(
        self,
        method,
        url,
        params=None,
        data=None,
        headers=None,
        auth=None,
        timeout=None,
        allow_redirects=False,
    ):
        headers = dict(headers or {})
        if auth:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
            headers["Authorization"] = "Basic " + token
        if params:
            url += "?" + urllib.parse.urlencode(params)
        body = urllib.parse.urlencode(data).encode() if data else None
        if body:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        req = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout or 30) as r:
                return Response(r.status, r.read().decode())
        except urllib.error.HTTPError as e:
            return Response(e.code, e.read().decode())
