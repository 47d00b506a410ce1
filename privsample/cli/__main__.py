"""``python -m privsample.cli``."""

from privsample.cli.app import main

if __name__ == "__main__":
    main()
