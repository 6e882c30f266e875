"""``python -m dreamdb`` runs the CLI."""

import sys

from dreamdb.cli import main

sys.exit(main())
