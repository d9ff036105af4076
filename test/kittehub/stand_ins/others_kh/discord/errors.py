class DiscordException(Exception):
    pass


class ClientException(DiscordException):
    pass


class HTTPException(DiscordException):
    def __init__(self, status, text):
        super().__init__(f"{status} {text}")
        self.status, self.text = status, text


class Forbidden(HTTPException):
    pass


class NotFound(HTTPException):
    pass
