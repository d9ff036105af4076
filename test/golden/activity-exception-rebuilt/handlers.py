import autokitteh


class X(Exception):
    def __init__(self, a, b):
        super().__init__(a)  # its args, (1,), do not make an X again


@autokitteh.activity
def fails():
    raise X(1, 2)


def on_event(event):
    try:
        fails()
    except X as e:  # still an X in the workflow
        print("caught X", e.args)
    fails()
