from emulator.cli import main

main()
