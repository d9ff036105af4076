class APIResponseError(Exception):
    def __init__(self, message="", status=None, code=""):
        super().__init__(message)
        self.status, self.code = status, code
