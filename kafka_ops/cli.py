def main() -> None:  # placeholder until the CLI module lands
    pass
