"""``python -m leaklint`` runs the command line."""

from leaklint.cli import main

if __name__ == "__main__":
    main()
