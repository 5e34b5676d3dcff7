"""The detectors of leaklint's own rules, one module per rule (``check`` and its helpers), named like
the rule module in ``leaklint.rules``: imported only for a file that passes the gate, because they
import libcst and the analysis."""
