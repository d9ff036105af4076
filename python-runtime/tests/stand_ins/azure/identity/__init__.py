"""Test stand-in for azure-identity (see ../../README.md): `ClientSecretCredential` and
`CertificateCredential`, whose `get_token(*scopes)` asks the client-credentials token at
`<authority>/<tenant>/oauth2/v2.0/token`; the authority is `AZURE_AUTHORITY_HOST` when set, as
azure-identity reads it (unlike azure-identity, an http one is taken, for a loopback stand-in)."""

import os
from types import SimpleNamespace

from standin_http import call


class _Credential:
    def __init__(self, tenant_id, client_id, **kwargs):
        self.tenant_id, self.client_id = tenant_id, client_id

    def _form(self):
        return {"client_id": self.client_id}

    def get_token(self, *scopes, **kwargs):
        authority = os.environ.get("AZURE_AUTHORITY_HOST", "https://login.microsoftonline.com")
        form = {**self._form(), "grant_type": "client_credentials", "scope": " ".join(scopes)}
        _, answer = call("POST", f"{authority}/{self.tenant_id}/oauth2/v2.0/token", form=form)
        return SimpleNamespace(token=answer["access_token"], expires_on=answer["expires_in"])


class ClientSecretCredential(_Credential):
    def __init__(self, tenant_id, client_id, client_secret, **kwargs):
        super().__init__(tenant_id, client_id)
        self.client_secret = client_secret

    def _form(self):
        return {"client_id": self.client_id, "client_secret": self.client_secret}


class CertificateCredential(_Credential):
    def __init__(self, tenant_id, client_id, certificate_path=None, *, certificate_data=None, **kwargs):
        super().__init__(tenant_id, client_id)
        self.certificate_data = certificate_data

    def _form(self):  # azure-identity signs a client assertion with the certificate's key
        return {"client_id": self.client_id, "client_assertion": "signed-with-the-certificate"}
