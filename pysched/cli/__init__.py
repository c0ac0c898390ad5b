"""The Typer command line: parsing and wiring only."""
