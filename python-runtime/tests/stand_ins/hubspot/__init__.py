"""Test stand-in for hubspot-api-client (see ../README.md): `HubSpot(access_token=…, **config)`,
its keyword arguments set on each API's configuration (`host` among them), and
`crm.contacts.basic_api.get_page()`."""

from types import SimpleNamespace

from standin_http import call


class HubSpot:
    def __init__(self, api_key=None, access_token=None, retry=None, **kwargs):
        self.config = {"api_key": api_key, "access_token": access_token, "retry": retry, **kwargs}

    @property
    def crm(self):
        host = self.config.get("host", "https://api.hubapi.com")
        headers = {"Authorization": f"Bearer {self.config['access_token']}"}

        def get_page(limit=10):
            return call("GET", f"{host}/crm/v3/objects/contacts", headers, params={"limit": limit})[1]

        return SimpleNamespace(contacts=SimpleNamespace(basic_api=SimpleNamespace(get_page=get_page)))


Client = HubSpot
