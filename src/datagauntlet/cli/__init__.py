"""The `datagauntlet` command line: one module per subcommand."""
