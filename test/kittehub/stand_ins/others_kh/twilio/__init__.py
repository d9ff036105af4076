"""Kittehub stand-in for twilio (never shipped): `twilio.rest.Client(username, password,
account_sid=…, http_client=…)` whose `messages.create(to=…, from_=…, body=…)` POSTs the form
Twilio's library sends to api.twilio.com through `http_client` and returns an object with the
answer's fields (`sid`, `status`, …); an error status raises
`twilio.base.exceptions.TwilioRestException`."""
