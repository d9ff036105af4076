"""Kittehub stand-in for zeep (tests only, never shipped: the local package index lacks it).

Its dist-info makes pip count `zeep` in a project's requirements.txt as installed. `Client(wsdl)`
reads the WSDL over HTTP, as zeep does, and `client.service.<Operation>(**args)` posts the SOAP
1.1 request zeep sends for a document/literal operation (the operation's element in the target
namespace, one child per argument; `SOAPAction` from the binding) to the port's `soap:address`,
and returns the single value of the answer's `<Operation>Result` (an int when it reads as one),
as zeep returns a one-element result. A SOAP fault raises `zeep.exceptions.Fault`-like
`Fault`.
"""

import urllib.request
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

WSDL = "http://schemas.xmlsoap.org/wsdl/"
SOAP = "http://schemas.xmlsoap.org/wsdl/soap/"
ENV = "http://schemas.xmlsoap.org/soap/envelope/"


class Fault(Exception):
    pass


def _fetch(url, data=None, headers=None):
    req = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data else "GET")
    with urllib.request.urlopen(req, timeout=30) as res:
        return res.read()


def _value(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return text


class _Service:
    def __init__(self, address, namespace, actions):
        self._address, self._namespace, self._actions = address, namespace, actions

    def __getattr__(self, name):
        if name not in self._actions:
            raise AttributeError(f"Service has no operation {name!r}")

        def call(**kwargs):
            args = "".join(f"<ns0:{k}>{escape(str(v))}</ns0:{k}>" for k, v in kwargs.items())
            body = (
                f'<soap-env:Envelope xmlns:soap-env="{ENV}"><soap-env:Body>'
                f'<ns0:{name} xmlns:ns0="{self._namespace}">{args}</ns0:{name}>'
                "</soap-env:Body></soap-env:Envelope>"
            ).encode()
            headers = {"SOAPAction": f'"{self._actions[name]}"', "Content-Type": "text/xml; charset=utf-8"}
            root = ET.fromstring(_fetch(self._address, body, headers))
            answer = root.find(f"{{{ENV}}}Body")[0]
            if answer.tag == f"{{{ENV}}}Fault":
                raise Fault(answer.findtext("faultstring") or "SOAP fault")
            result = answer[0] if len(answer) else None
            return None if result is None else _value(result.text)

        return call


class Client:
    def __init__(self, wsdl, **kwargs):
        root = ET.fromstring(_fetch(wsdl))
        namespace = root.get("targetNamespace", "")
        actions = {}
        for binding in root.findall(f"{{{WSDL}}}binding"):
            if binding.find(f"{{{SOAP}}}binding") is None:
                continue  # SOAP 1.2 or HTTP bindings: zeep's default service port is SOAP 1.1
            for op in binding.findall(f"{{{WSDL}}}operation"):
                soap_op = op.find(f"{{{SOAP}}}operation")
                actions[op.get("name")] = soap_op.get("soapAction", "") if soap_op is not None else ""
        address = root.find(f".//{{{WSDL}}}port/{{{SOAP}}}address")
        if address is None:
            raise ValueError("zeep stand-in: the WSDL names no SOAP 1.1 address")
        self.service = _Service(address.get("location"), namespace, actions)
