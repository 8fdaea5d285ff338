"""The command line's parser class: argparse with the project's error form and a help that a
command may extend (:func:`twinnet.cli.gen_cmd.family_help` lists the flags of the family a
help request names)."""

import argparse
import sys


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the project's error form: one line ``twinnet: <command>: <message>``,
    exit status 2 (argparse's own form is a usage block plus the message). Abbreviated flags
    are not accepted (``--n`` must not silently mean ``--no-trace``). ``-h``/``--help`` print
    :class:`Help`'s text. A parser lists what was added to it: its ``arguments`` (the
    actions ``add_argument`` returned) and its ``commands`` (each subcommand's parser, by
    name)."""

    def __init__(self, *args, add_help: bool = True, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, add_help=False, **kwargs)
        self.arguments: list[argparse.Action] = []
        self.commands: dict[str, ArgumentParser] = {}
        if add_help:
            self.add_argument("-h", "--help", action=Help, nargs=0, default=argparse.SUPPRESS,
                              help="show this help message and exit")

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.arguments.append(action)
        return action

    def add_argument_group(self, *args, **kwargs):
        group = super().add_argument_group(*args, **kwargs)
        add_argument = group.add_argument

        def add(*names, **options) -> argparse.Action:
            action = add_argument(*names, **options)
            self.arguments.append(action)
            return action

        group.add_argument = add
        return group

    def add_subparsers(self, **kwargs):
        subcommands = super().add_subparsers(**kwargs)
        add_parser = subcommands.add_parser

        def add(name: str, **options) -> ArgumentParser:
            parser = self.commands[name] = add_parser(name, **options)
            return parser

        subcommands.add_parser = add
        return subcommands

    def parse_known_args(self, args=None, namespace=None):
        # The words this parser is given (a subcommand's parser: those after its name), for
        # :class:`Help`.
        self.words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        command = self.prog.removeprefix("twinnet").strip()
        self.exit(2, f"twinnet: {command + ': ' if command else ''}{message} "
                     f"(see '{self.prog} --help')\n")


class Help(argparse.Action):
    """Print the parser's help and exit. A parser whose default ``help_text`` is a function
    ``(parser, words) -> str`` prints what it returns for the words it was given (all of
    them, those after ``--help`` too): a help may depend on the command line's other words."""

    def __call__(self, parser, namespace, values, option_string=None):
        text = parser.get_default("help_text")
        sys.stdout.write(parser.format_help() if text is None else text(parser, parser.words))
        parser.exit()
