"""leaklint's own rules, one module per rule (installed as ``leaklint.rules``)."""
