import sys

from acp_tui.cli import main

sys.exit(main())
