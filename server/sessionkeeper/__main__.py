"""`python -m sessionkeeper` runs the CLI; so does `python -S <this file>`, which is how the agents'
hooks start it: without `site` a hook starts ~4 ms sooner (a tool hook needs only the standard
library; `with_site` adds site-packages where more is needed)."""

import sys

if not __package__:  # run as a file: the package's parent heads the path, not this folder
    import os

    sys.path[0] = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

from sessionkeeper.cli import main

sys.exit(main())
