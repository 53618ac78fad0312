"""The minimal bot, answering 'ready' with the name given as argv[1]
(Python escapes decoded, so a test can give it characters a terminal
would act on, e.g. \\u202e, the right-to-left override)."""
import sys

import common

NAME = sys.argv[1].encode("ascii").decode("unicode_escape")

common.run(on_start=lambda msg: common.ready(msg, name=NAME))
