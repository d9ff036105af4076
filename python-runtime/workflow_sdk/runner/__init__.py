"""The session runner: fork server, protocol, import hook, activities. See README.md."""
