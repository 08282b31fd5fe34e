from seek.cli import main

main()
