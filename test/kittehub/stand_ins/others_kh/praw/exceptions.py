class PRAWException(Exception):
    pass


class RedditAPIException(PRAWException):
    def __init__(self, items):
        super().__init__("; ".join(": ".join(str(x) for x in item) for item in items))
        self.items = items
