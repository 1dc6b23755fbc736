from lcp.cli import main

main()
