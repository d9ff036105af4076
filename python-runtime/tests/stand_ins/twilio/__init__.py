"""Test stand-in for twilio (see ../README.md): only what autokitteh.twilio uses."""
