"""Kittehub stand-in for hubspot-api-client (never shipped): `HubSpot(access_token=…, host=…)`
with `crm.contacts.basic_api.create` and `crm.deals.get_all`, sent to HubSpot's CRM v3 paths
with the bearer token; answers become objects with `id` and `properties`, an error status
raises `hubspot.crm.contacts.exceptions.ApiException` (with `status`), as the package does."""

from types import SimpleNamespace

from standin_http import call as request

from .crm.contacts.exceptions import ApiException


class _Object(SimpleNamespace):
    def to_dict(self):
        return dict(self.__dict__)


def _objects(answer):
    return [_Object(**{"properties": {}, **item}) for item in answer.get("results", [])]


class HubSpot:
    def __init__(self, api_key=None, access_token=None, retry=None, **kwargs):
        self.config = {"api_key": api_key, "access_token": access_token, "retry": retry, **kwargs}
        host = kwargs.get("host", "https://api.hubapi.com")
        self.crm = SimpleNamespace(
            contacts=SimpleNamespace(
                basic_api=SimpleNamespace(create=self._create_contact, get_page=self._contacts_page)
            ),
            deals=SimpleNamespace(get_all=self._all_deals),
        )
        self._host = host

    def _call(self, method, path, **kwargs):
        headers = {"Authorization": f"Bearer {self.config['access_token']}"}
        status, answer = request(method, self._host + path, headers, **kwargs)
        if status >= 400:
            raise ApiException(status=status, reason=str(answer), body=answer)
        return answer

    def _create_contact(self, simple_public_object_input_for_create=None, **kwargs):
        body = simple_public_object_input_for_create or kwargs.get("simple_public_object_input")
        answer = self._call("POST", "/crm/v3/objects/contacts", json_body=body.to_dict())
        return _Object(**answer)

    def _contacts_page(self, limit=10):
        return self._call("GET", "/crm/v3/objects/contacts", params={"limit": limit})

    def _all_deals(self, **kwargs):
        found, after = [], None
        while True:
            params = {"limit": 100, **({"after": after} if after else {})}
            answer = self._call("GET", "/crm/v3/objects/deals", params=params)
            found += _objects(answer)
            after = ((answer.get("paging") or {}).get("next") or {}).get("after")
            if not after:
                return found


Client = HubSpot
