"""Thin command-line entry points; the work lives in the library."""
