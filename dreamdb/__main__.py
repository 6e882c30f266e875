"""``python -m dreamdb`` runs the CLI."""

import sys

from dreamdb.entry import main

sys.exit(main())
