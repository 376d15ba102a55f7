from lilo.flows.cli import console_main

if __name__ == "__main__":  # not when a spawned worker process imports this module
    raise SystemExit(console_main())
