"""gpuwatch's exceptions: every failure of the C++ core arrives as one of these."""


class Error(Exception):
    """Base of every gpuwatch error."""


class InvalidArgument(Error, ValueError):
    """A bad value: an option, a file's contents, a limit out of range."""


class NotFound(Error, LookupError):
    """A library, file, device or field that is not there."""


class Unavailable(Error, RuntimeError):
    """A driver or device that cannot answer now, or a closed sampler."""


class PermissionDenied(Error, PermissionError):
    """The operating system or the driver refused."""


class NotEnoughGpus(Error):
    """select(): fewer GPUs qualify than were asked for.

    ``candidates`` lists every GPU considered, each with the reasons it was not chosen.
    """

    def __init__(self, message, candidates):
        super().__init__(message)
        self.candidates = candidates
