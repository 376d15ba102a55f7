from flows.cli import main

raise SystemExit(main())
