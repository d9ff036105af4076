"""`asana.rest.ApiException`, as asana 5 names it (status, reason, body)."""


class ApiException(Exception):
    def __init__(self, status=None, reason=None, body=None, http_resp=None):
        self.status, self.reason, self.body = status, reason, body
        super().__init__(f"({status})\nReason: {reason}\nHTTP response body: {body}")
