class ApiException(Exception):
    def __init__(self, status=None, reason=None, http_resp=None, body=None):
        super().__init__(f"({status})\nReason: {reason}")
        self.status, self.reason, self.body = status, reason, body
