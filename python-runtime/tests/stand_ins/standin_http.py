"""The one HTTP call the stand-in packages make (urllib, JSON in and out), so that a test sees
what reaches its stand-in API server; the kittehub harness's own stand-ins make it too."""

import json
import urllib.error
import urllib.parse
import urllib.request


def call(method, url, headers=None, json_body=None, form=None, params=None):
    """`(status, parsed JSON, else the text)` of one request; an error status is returned, not
    raised."""
    if params:
        url += ("&" if "?" in url else "?") + urllib.parse.urlencode(params)
    headers = dict(headers or {})
    data = None
    if json_body is not None:
        data, headers["Content-Type"] = json.dumps(json_body).encode(), "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, _parse(r.read())
    except urllib.error.HTTPError as e:
        return e.code, _parse(e.read())


def _parse(raw):
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return raw.decode(errors="replace")
