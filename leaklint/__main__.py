"""``python -m leaklint`` runs the command line."""

from leaklint.cli import run

if __name__ == "__main__":
    run()
