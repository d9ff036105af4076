from autokitteh import activity

# This is not unpicklable.
class X(Exception):
    def __init__(self, a, b):
        self._a, self._b = a, b
        super(X, self).__init__(a)

@activity
def callstuff():
    raise X(1, 2)


def main(_):
    callstuff()
