"""slack_sdk.errors: the one error programs catch."""


class SlackClientError(Exception):
    """Base of slack_sdk's errors."""


class SlackApiError(SlackClientError):
    """An answer whose `ok` is false; `response` is the `SlackResponse`."""

    def __init__(self, message, response):
        msg = f"{message}\nThe server responded with: {getattr(response, 'data', response)}"
        super().__init__(msg)
        self.response = response
