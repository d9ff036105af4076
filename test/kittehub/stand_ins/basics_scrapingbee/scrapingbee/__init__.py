"""A stand-in for `scrapingbee` (not in this machine's package index), for the kittehub harness
only: `ScrapingBeeClient(api_key).get(url, params=…)` sends what the real client sends (GET
`/api/v1/` with `api_key`, `url` and the params, booleans lower-cased) but over `http://`, so
that a session taking the stand-in API as its HTTP proxy reaches it. Never shipped."""

import requests

API = "http://app.scrapingbee.com/api/v1/"


class ScrapingBeeClient:
    def __init__(self, api_key):
        self.api_key = api_key

    def get(self, url, params=None, headers=None, cookies=None, **kwargs):
        query = {"api_key": self.api_key, "url": url}
        for key, value in (params or {}).items():
            query[key] = str(value).lower() if isinstance(value, bool) else value
        return requests.get(API, params=query, headers=headers, cookies=cookies, timeout=30)
