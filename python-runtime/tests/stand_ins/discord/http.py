from standin_http import call


class Route:
    BASE = "https://discord.com/api/v10"

    def __init__(self, method, path):
        self.method, self.url = method, self.BASE + path


def get(route, token):
    return call(route.method, route.url, {"Authorization": f"Bot {token}"})[1]
