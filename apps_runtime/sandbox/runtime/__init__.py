"""Child side of the sandbox: the zygote and the code that runs in each forked child.

Everything in this package runs under ``python -I -S`` with an empty environment, so it imports only the
standard library and its own modules (relatively). The host imports only ``protocol`` from here; the zygote
loads the whole package by file path under a private name (see ``boot.py``).
"""
