from featurehub.cli import main

raise SystemExit(main())
