from autokitteh import AutoKittehError, activity, next_event, subscribe


@activity
def problem():
    try:
        next_event("event")
    except AutoKittehError as err:
        text, also_runtime = str(err), isinstance(err, RuntimeError)
    print("next_event inside activity" in text, also_runtime)


def on_event(event):
    problem()
    try:
        subscribe("meow", "woof")
    except Exception as e:
        print(type(e).__name__, e)
