"""Lets `python -m fcreplay` run the command line."""

from fcreplay.cli import main

main()
