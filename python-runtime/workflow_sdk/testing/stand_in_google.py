"""The stand-in API server's Google preset: Calendar, Drive, Gmail and Sheets routes, and the
base path each Google API's client needs (`_GOOGLE_PATHS`)."""

import threading


def _google_routes(api):
    def event_inserted(request):
        body = request.json if isinstance(request.json, dict) else {}
        eid = f"standin{api.next_id()}"
        return {
            **body,
            "kind": "calendar#event",
            "id": eid,
            "status": "confirmed",
            "htmlLink": f"https://calendar.google.com/event?eid={eid}",
            "sequence": 0,
        }

    def file_created(request):
        body = request.json if isinstance(request.json, dict) else {}
        return {
            "kind": "drive#file",
            "id": f"file{api.next_id()}",
            "name": body.get("name", "Untitled"),
            "mimeType": body.get("mimeType", "application/octet-stream"),
        }

    def sent(request):
        return {"id": f"msg{api.next_id()}", "threadId": f"thread{api.next_id()}", "labelIds": ["SENT"]}

    def message(request):
        return {
            "id": request.params["id"],
            "threadId": "thread0",
            "labelIds": ["INBOX"],
            "snippet": "",
            "payload": {"headers": [], "mimeType": "text/plain", "body": {"size": 0}},
        }

    token = {"access_token": "ya29.stand-in", "expires_in": 3600, "token_type": "Bearer"}
    return [
        ("POST", "/token", token),
        (
            "GET",
            "/calendar/v3/calendars/{calendar}/events",
            {"kind": "calendar#events", "items": [], "nextSyncToken": "stand-in-sync"},
        ),
        ("POST", "/calendar/v3/calendars/{calendar}/events", event_inserted),
        ("GET", "/drive/v3/files", {"kind": "drive#fileList", "files": [], "incompleteSearch": False}),
        ("POST", "/drive/v3/files", file_created),
        ("POST", "/gmail/v1/users/{user}/messages/send", sent),
        ("GET", "/gmail/v1/users/{user}/messages", {"messages": [], "resultSizeEstimate": 0}),
        ("GET", "/gmail/v1/users/{user}/messages/{id}", message),
    ] + _sheets_routes(api)


def _sheets_routes(api):
    # Rows appended to a sheet (`{(spreadsheet id, sheet title): [row, …]}`), as strings (what
    # Sheets gives back for plain values); a read of any range of that sheet returns them all.
    sheets = {}
    lock = threading.Lock()

    def where(request):
        return request.params["id"], request.params["range"].split("!")[0].strip("'")

    def values(request):
        with lock:
            rows = list(sheets.get(where(request), []))
        out = {"range": request.params["range"], "majorDimension": "ROWS"}
        return {**out, "values": rows} if rows else out

    def appended(request):
        rows = (request.json or {}).get("values") or []
        with lock:
            sheets.setdefault(where(request), []).extend([[str(v) for v in row] for row in rows])
        sheet = where(request)[1]
        updates = {
            "spreadsheetId": request.params["id"],
            "updatedRange": f"{sheet}!A1",
            "updatedRows": len(rows),
            "updatedColumns": max((len(r) for r in rows), default=0),
            "updatedCells": sum(len(r) for r in rows),
        }
        return {"spreadsheetId": request.params["id"], "tableRange": f"{sheet}!A1", "updates": updates}

    def updated(request):
        rows = (request.json or {}).get("values") or []
        return {
            "spreadsheetId": request.params["id"],
            "updatedRange": request.params["range"],
            "updatedRows": len(rows),
            "updatedCells": sum(len(r) for r in rows),
        }

    def spreadsheet(request):
        sid = request.params["id"]
        sheet = {
            "properties": {
                "sheetId": 0,
                "title": "Sheet1",
                "index": 0,
                "sheetType": "GRID",
                "gridProperties": {"rowCount": 1000, "columnCount": 26},
            }
        }
        return {
            "spreadsheetId": sid,
            "properties": {"title": "Stand-in sheet", "locale": "en_US", "timeZone": "Etc/GMT"},
            "sheets": [sheet],
            "spreadsheetUrl": f"https://docs.google.com/spreadsheets/d/{sid}/edit",
        }

    return [
        ("GET", "/v4/spreadsheets/{id}", spreadsheet),
        ("GET", "/v4/spreadsheets/{id}/values/{range}", values),
        ("PUT", "/v4/spreadsheets/{id}/values/{range}", updated),
        ("POST", "/v4/spreadsheets/{id}/values/{range}:append", appended),
    ]


# What `<conn>__base_url` ends with per Google API: googleapiclient drops a discovery document's
# service path (Calendar's `calendar/v3/`, Drive's `drive/v3/`) when given an endpoint, while
# Sheets' and Gmail's paths carry their version; gspread keeps the paths whole.
_GOOGLE_PATHS = {
    "calendar": "/calendar/v3/",
    "googlecalendar": "/calendar/v3/",
    "drive": "/drive/v3/",
    "googledrive": "/drive/v3/",
    "gmail": "/",
    "sheets": "/",
    "googlesheets": "/",
    "gspread": "/",
}
