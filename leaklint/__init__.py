"""leaklint: find memory-leak anti-patterns in deep-learning training code.

The static linter never imports torch; only ``leaklint verify`` (the runtime extra) does.
"""

__version__ = "0.2.0"

