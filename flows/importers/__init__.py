"""Dataset importers (`lilo import <name> PATH`), one module each: see base.py."""
