import sys

from queuewatch_cli.main import main

sys.exit(main())
