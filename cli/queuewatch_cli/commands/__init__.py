"""The commands, one package each: every package registers its commands (common/command.py) with their flags
beside their code, and registry.py lists them. A command imports common/ and devkit/, never another command;
the demo alone runs the others, as the tour of them."""
