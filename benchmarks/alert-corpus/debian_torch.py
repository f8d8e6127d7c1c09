"""torch for the corpus generators: Debian's python3-torch lives under /usr/bin/python3, so a
generator started by another interpreter (a virtualenv's python3) is run again under that one."""
import os
import sys


def import_torch():
    """The torch module; re-executes the running script under /usr/bin/python3 when this
    interpreter has none and that one is another. ImportError when neither has it."""
    try:
        import torch
    except ImportError:
        debian = "/usr/bin/python3"
        if os.path.exists(debian) and os.path.realpath(sys.executable) != os.path.realpath(debian):
            os.execv(debian, [debian] + sys.argv)
        raise
    return torch
