class TwilioException(Exception):
    pass


class TwilioRestException(TwilioException):
    def __init__(self, status, uri, msg="", code=None, method="GET", details=None):
        super().__init__(f"HTTP {status} error: {msg}")
        self.status, self.uri, self.msg, self.code, self.method = status, uri, msg, code, method
