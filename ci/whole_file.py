"""The ci/ scripts' one way to write a table or a file they propose: whole or not at all."""
import errno
import os
import tempfile


def write_whole(path, text):
    """PATH holds TEXT, all of it, or stays as it was: written to a temp beside it, then renamed
    over it. Raises OSError (IsADirectoryError where PATH is a folder), the temp removed."""
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file to write")
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        os.unlink(tmp)
        raise
