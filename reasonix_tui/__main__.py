import sys

from reasonix_tui.cli import main

sys.exit(main())
