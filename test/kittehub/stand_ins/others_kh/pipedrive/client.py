"""Kittehub stand-in for pipedrive-python-lib (never shipped): `Client(domain=…)` whose base
URL is `<domain>/v1/`, `set_api_token` (sent as the `api_token` query parameter, as the package
does) and `deals.get_all_deals()` (GET deals) / `deals.create_deal(data)` (POST deals, JSON);
each returns the answer's JSON (`{"success": …, "data": …}`)."""

from standin_http import call as request


class _Deals:
    def __init__(self, client):
        self._client = client

    def get_all_deals(self, params=None):
        return self._client._request("GET", "deals", params=params)

    def create_deal(self, data, **kwargs):
        return self._client._request("POST", "deals", json_body=data)


class Client:
    BASE_URL = "https://api.pipedrive.com/"

    def __init__(self, client_id=None, client_secret=None, domain=None):
        self.api_token = None
        self.deals = _Deals(self)
        if domain:
            self.BASE_URL = domain + ("" if domain.endswith("/") else "/") + "v1/"

    def set_api_token(self, api_token):
        self.api_token = api_token

    def _request(self, method, path, params=None, **kwargs):
        query = {**(params or {}), "api_token": self.api_token}
        return request(method, self.BASE_URL + path, params=query, **kwargs)[1]
