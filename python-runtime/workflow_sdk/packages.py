"""AutoKitteh's `packages.install`: not done at run time here; packages come from requirements.txt."""


def install(*packages):
    """Refused: list the packages in the project's requirements.txt, installed at deploy."""
    raise RuntimeError(
        f"autokitteh.packages.install{packages!r}: installing packages while a session runs is not "
        "supported; list them in the project's requirements.txt, which the deploy installs"
    )
