"""The exceptions the CLI turns into a message for the user, and its exit codes.

Every error says what went wrong and what to do about it. Its class says
which exit code ``ampkit`` ends with, so that scripts and CI can tell a
mistake in what they gave from a host that lacks something, a build that
failed, or a run that failed (README, "Exit codes").
"""

#: A run (or a campaign's run) finished but failed; its directory says why.
EXIT_FAILED_RUN = 1
#: The command cannot be done as given: options that do not go together
#: (argparse's own code), or a target that exists or is in use (a run
#: directory without --force, a campaign another runner holds).
EXIT_USAGE = 2
#: A file or a name given to the kit is wrong: a mix, spec, platform,
#: profile or run directory, an unknown policy or engine.
EXIT_INPUT = 3
#: The host lacks something: a Debian package, a program, a gem5 build.
EXIT_ENVIRONMENT = 4
#: A build failed: the kernel (or a patch that does not apply), the guest
#: programs and images, PARSEC.
EXIT_BUILD = 5


class AmpkitError(Exception):
    """Something the user can act on: what went wrong, and what to do about it."""

    exit_code = EXIT_INPUT

    def __init__(self, what: str, hint: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.hint = hint

    def __str__(self) -> str:
        return self.what if self.hint is None else f"{self.what}\n  hint: {self.hint}"


class UsageError(AmpkitError):
    """Options that do not go together, or a target that exists or is in use."""

    exit_code = EXIT_USAGE


class MissingDependency(AmpkitError):
    """The host lacks a package, a program or a gem5 build."""

    exit_code = EXIT_ENVIRONMENT


class BuildFailed(AmpkitError):
    """A build step failed; the hint says where its log is."""

    exit_code = EXIT_BUILD
