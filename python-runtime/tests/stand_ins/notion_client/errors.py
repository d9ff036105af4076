class APIResponseError(Exception):
    pass
