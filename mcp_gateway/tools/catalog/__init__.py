"""The per-caller tool catalog and what listing costs: built-ins, cursors, budgets, tokens."""
